import { Anchor, AppShell, Badge, Burger, Button, Center, Group, Loader, NavLink, Stack, Text } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { lazy, Suspense, useCallback, useEffect, useState } from 'react'
import { Link, Route, Switch, useLocation, useSearch } from 'wouter'
import { loadMe, setCsrf, signOut, whenSignedOut } from './api'
import { Inbox } from './pages/Inbox'
import { SignIn } from './pages/SignIn'
import { displayName, type Me, ROLE_LABEL, rememberReturn, signInPath, takeReturn } from './session'
import { MeContext } from './me-context'

// Pages past the first one load when opened: the first load stays small.
const UseCasePage = lazy(() => import('./pages/UseCase'))
const RecordPage = lazy(() => import('./pages/Record'))
const Registry = lazy(() => import('./pages/Registry'))
const Dashboard = lazy(() => import('./pages/Dashboard'))
const Controls = lazy(() => import('./pages/Controls'))

const NAV = [
  { href: '/', label: 'Inbox' },
  { href: '/use-cases', label: 'Use cases' },
  { href: '/controls', label: 'Controls' },
  { href: '/models', label: 'Models' },
  { href: '/vendors', label: 'Vendors' },
  { href: '/dashboard', label: 'Dashboard' },
]

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined)
  const [location, navigate] = useLocation()
  const search = useSearch()
  const [opened, { toggle, close }] = useDisclosure()

  const here = location + (search ? `?${search}` : '')
  const endSession = useCallback(() => {
    setMe(null)
    rememberReturn(sessionStorage, here)
    navigate(signInPath(here), { replace: true })
  }, [here, navigate])

  useEffect(() => {
    whenSignedOut(endSession)
  }, [endSession])

  useEffect(() => {
    let live = true
    void loadMe().then((found) => {
      if (!live) return
      setCsrf(found?.csrf_token)
      setMe(found)
      if (!found && !location.startsWith('/sign-in')) endSession()
      else if (found) {
        const back = takeReturn(sessionStorage)
        if (back) navigate(back, { replace: true })
        else if (location.startsWith('/sign-in')) navigate('/', { replace: true })
      }
    })
    return () => {
      live = false
    }
    // Once, at start: later 401s arrive through whenSignedOut.
  }, [navigate, location.startsWith, endSession])

  if (me === undefined) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading" />
      </Center>
    )
  }
  if (me === null) {
    return <SignIn />
  }

  return (
    <MeContext.Provider value={me}>
      <AppShell
        header={{ height: 60 }}
        navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
        padding="md"
      >
        <AppShell.Header>
          <Group h="100%" px="md" justify="space-between" wrap="nowrap">
            <Group wrap="nowrap">
              <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Open the menu" />
              <Anchor component={Link} href="/" fw={700} c="inherit" underline="never">
                AI governance
              </Anchor>
            </Group>
            <Group gap="sm" wrap="nowrap">
              <Stack gap={0} align="flex-end" visibleFrom="xs">
                <Text size="sm" fw={600} data-testid="who">
                  {displayName(me)}
                </Text>
                <Text size="xs" c="dimmed">
                  {me.tenant}
                </Text>
              </Stack>
              <Badge data-testid="role">{ROLE_LABEL[me.role] ?? me.role}</Badge>
              <Button
                variant="default"
                size="xs"
                onClick={async () => {
                  await signOut()
                  setMe(null)
                  navigate('/sign-in?signed_out=1', { replace: true })
                }}
              >
                Sign out
              </Button>
            </Group>
          </Group>
        </AppShell.Header>
        <AppShell.Navbar p="xs" aria-label="Main">
          {NAV.map((item) => (
            <NavLink
              key={item.href}
              component={Link}
              href={item.href}
              label={item.label}
              active={item.href === '/' ? location === '/' : location.startsWith(item.href)}
              onClick={close}
            />
          ))}
        </AppShell.Navbar>
        <AppShell.Main>
          <Suspense
            fallback={
              <Center p="xl">
                <Loader aria-label="Loading" />
              </Center>
            }
          >
            <Switch>
              <Route path="/">{() => <Inbox />}</Route>
              <Route path="/use-cases/:id">{(p) => <UseCasePage id={p.id} />}</Route>
              <Route path="/use-cases">{() => <Registry kind="use_cases" />}</Route>
              <Route path="/models/:id">{(p) => <RecordPage kind="model" id={p.id} />}</Route>
              <Route path="/vendors/:id">{(p) => <RecordPage kind="vendor" id={p.id} />}</Route>
              <Route path="/models">{() => <Registry kind="models" />}</Route>
              <Route path="/vendors">{() => <Registry kind="vendors" />}</Route>
              <Route path="/controls">{() => <Controls />}</Route>
              <Route path="/dashboard">{() => <Dashboard />}</Route>
              <Route>
                <Text>This page does not exist.</Text>
                <Anchor component={Link} href="/">
                  Back to the inbox
                </Anchor>
              </Route>
            </Switch>
          </Suspense>
        </AppShell.Main>
      </AppShell>
    </MeContext.Provider>
  )
}
