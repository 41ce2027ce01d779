import { Alert, Button, Code, Container, Divider, Paper, Stack, Text, TextInput, Title } from '@mantine/core'
import { useState } from 'react'
import { useSearch } from 'wouter'
import { safeReturnTo, ssoStartUrl } from '../session'

/** Single sign-on for a tenant where it is configured, and how one-time links work where it is not. */
export function SignIn() {
  const params = new URLSearchParams(useSearch())
  const returnTo = safeReturnTo(params.get('return_to'))
  const [tenant, setTenant] = useState(params.get('tenant') ?? '')
  const error = params.get('error')
  return (
    <Container size={480} py="xl" component="main">
      <Stack>
        <Title order={1}>Sign in to AI governance</Title>
        {params.get('signed_out') && (
          <Alert color="green" title="You are signed out">
            Sign in again to continue.
          </Alert>
        )}
        {returnTo !== '/' && !params.get('signed_out') && (
          <Alert color="yellow" title="Your session has ended">
            Sign in again and you will be taken back to the page you were on.
          </Alert>
        )}
        {error && (
          <Alert color="red" title="Sign-in did not work">
            {error}
          </Alert>
        )}
        <Paper withBorder p="lg">
          <form
            onSubmit={(e) => {
              e.preventDefault()
              if (tenant.trim()) window.location.assign(ssoStartUrl(tenant, returnTo))
            }}
          >
            <Stack>
              <Title order={2} size="h4">
                Single sign-on
              </Title>
              <TextInput
                label="Organisation"
                description="The name of your organisation on this service (its tenant), as your administrator gave it to you."
                value={tenant}
                onChange={(e) => setTenant(e.currentTarget.value)}
                required
                autoComplete="organization"
              />
              <Button type="submit">Continue with single sign-on</Button>
              <Text size="sm" c="dimmed">
                Works when your organisation has connected its identity provider; otherwise use a sign-in link.
              </Text>
            </Stack>
          </form>
        </Paper>
        <Divider label="or" labelPosition="center" />
        <Paper withBorder p="lg">
          <Stack gap="xs">
            <Title order={2} size="h4">
              A one-time sign-in link
            </Title>
            <Text size="sm">
              Without single sign-on, an administrator makes you a personal link that signs you in once and brings you
              here. They run:
            </Text>
            <Code block tabIndex={0} style={{ whiteSpace: 'pre-wrap' }}>
              aigov users login-link --tenant &lt;organisation&gt; --email &lt;your email&gt;
            </Code>
            <Text size="sm">Open the link in this browser. It works once and for a short time.</Text>
          </Stack>
        </Paper>
      </Stack>
    </Container>
  )
}
