import { Alert, Anchor, Badge, Card, Group, Loader, Stack, Text, Title } from '@mantine/core'
import { useEffect, useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api'
import { label, STEP_LABEL } from '../labels'
import { type InboxItem, sortInbox } from '../inbox'
import { useMe } from '../me-context'

/** How many of my own use cases the inbox looks into (each costs a few calls). */
const INBOX_USE_CASES = 25

/** What waits for me: missing answers, my controls (overdue first), use cases at a gate I can move on. */
export function Inbox() {
  const me = useMe()
  const [items, setItems] = useState<InboxItem[] | undefined>()
  const [error, setError] = useState<string | undefined>()

  useEffect(() => {
    if (!me.user) {
      setItems([])
      return
    }
    const userId = me.user.id
    const today = new Date().toISOString().slice(0, 10)
    let live = true
    void (async () => {
      const owned = await call(api.useCases.list({ ownerId: userId, pageLimit: INBOX_USE_CASES, sort: '-updated_at' }))
      if (owned.error) return live && setError(owned.error.message)
      const found: InboxItem[] = []
      await Promise.all(
        owned.data.items.map(async (uc) => {
          const base = `/use-cases/${uc.id}`
          const [qs, controls] = await Promise.all([
            call(api.useCases.questionnaires.list(uc.id, { pageLimit: 20 })),
            call(api.useCases.controls.list(uc.id, { assigneeId: userId, pageLimit: 100 })),
          ])
          for (const q of qs.data?.items ?? []) {
            const got = await call(api.useCases.questionnaires.get(uc.id, q.key))
            const p = got.data?.progress
            if (p && !p.complete) {
              found.push({
                kind: 'questionnaire',
                title: `Answer “${q.name}”`,
                detail: `${uc.name}: ${p.required - p.requiredAnswered} required answer(s) missing`,
                href: `${base}#questionnaires`,
              })
            }
          }
          for (const c of controls.data?.items ?? []) {
            if (c.status === 'implemented' || c.status === 'not_applicable') continue
            const overdue = c.dueDate != null && c.dueDate < today
            found.push({
              kind: 'control',
              title: `Control “${c.name}”`,
              detail: `${uc.name}${c.dueDate ? `, due ${c.dueDate}` : ''}`,
              href: `${base}#controls`,
              due: c.dueDate ?? undefined,
              overdue,
            })
          }
          if (me.role !== 'read' && uc.workflowStageStep && uc.workflowStageStep !== 'clear') {
            found.push({
              kind: 'gate',
              title: `Move “${uc.name}” forward`,
              detail: `Waiting at ${label(STEP_LABEL, uc.workflowStageStep)}`,
              href: `${base}#workflow`,
            })
          }
        }),
      )
      if (live) setItems(sortInbox(found))
    })()
    return () => {
      live = false
    }
  }, [me])

  return (
    <Stack>
      <Title order={1}>Inbox</Title>
      <Text c="dimmed">What waits for you on the use cases you own.</Text>
      {error && <Alert color="red">{error}</Alert>}
      {!items && !error && <Loader aria-label="Loading the inbox" />}
      {items && items.length === 0 && <Text>Nothing waits for you. </Text>}
      {items && items.length > 0 && (
        <Stack
          gap="sm"
          component="ul"
          style={{ listStyle: 'none', padding: 0, margin: 0 }}
          aria-label="Waiting for you"
        >
          {items.map((item) => (
            <Card withBorder key={`${item.kind}:${item.href}:${item.title}`} component="li" padding="sm">
              <Group justify="space-between" wrap="wrap">
                <Stack gap={2}>
                  <Anchor component={Link} href={item.href} fw={600}>
                    {item.title}
                  </Anchor>
                  <Text size="sm">{item.detail}</Text>
                </Stack>
                <Group gap="xs">
                  {item.overdue && <Badge color="red">Overdue</Badge>}
                  <Badge color="gray">
                    {item.kind === 'questionnaire' ? 'Questions' : item.kind === 'control' ? 'Control' : 'Workflow'}
                  </Badge>
                </Group>
              </Group>
            </Card>
          ))}
        </Stack>
      )}
    </Stack>
  )
}
