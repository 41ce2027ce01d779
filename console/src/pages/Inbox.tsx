import { Alert, Anchor, Badge, Card, Group, Loader, Stack, Text, Title } from '@mantine/core'
import { useEffect, useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api'
import { label, STEP_LABEL } from '../labels'
import { controlItems, type InboxItem, ownersOf, sortInbox } from '../inbox'
import { useMe } from '../me-context'

/** How many use cases per owner (me, each of my teams) the inbox looks into (each costs a few calls). */
const INBOX_USE_CASES = 25
/** How many of the tenant's teams are checked for my membership. */
const TEAMS_CHECKED = 100

type UseCaseRow = NonNullable<Awaited<ReturnType<typeof api.useCases.list>>['data']>['items'][number]

/** The teams I am a member of, among the tenant's first hundred. */
async function myTeams(userId: string): Promise<{ id: string; name: string }[]> {
  const teams = await call(api.teams.list({ pageLimit: TEAMS_CHECKED }))
  const mine = await Promise.all(
    (teams.data?.items ?? []).map(async (team) => {
      for (let after: string | undefined; ; ) {
        const page = await call(
          api.teams.members.list(team.id, { pageLimit: 100, ...(after ? { pageAfter: after } : {}) }),
        )
        if (page.data?.items.some((u) => u.id === userId)) return team
        after = page.data?.pagination.nextCursor ?? undefined
        if (!page.data?.pagination.hasMore || !after) return undefined
      }
    }),
  )
  return mine.filter((t) => t !== undefined)
}

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
      const teams = await myTeams(userId)
      const owners = ownersOf(userId, teams)
      // Use cases owned by me or one of my teams, and those with overdue controls (which may be assigned to me).
      const [lists, summary] = await Promise.all([
        Promise.all(
          [...owners.keys()].map((ownerId) =>
            call(api.useCases.list({ ownerId, pageLimit: INBOX_USE_CASES, sort: '-updated_at' })),
          ),
        ),
        call(api.governanceSummary.get({ overdueLimit: INBOX_USE_CASES })),
      ])
      const failed = lists.find((l) => l.error)?.error
      if (failed) return live && setError(failed.message)
      const owned = new Map<string, UseCaseRow>()
      for (const l of lists) for (const uc of l.data?.items ?? []) owned.set(uc.id, uc)
      const others = (summary.data?.overdueUseCases ?? []).filter((u) => !owned.has(u.id))
      const found: InboxItem[] = []
      await Promise.all([
        ...[...owned.values()].map(async (uc) => {
          const base = `/use-cases/${uc.id}`
          const forWhom = uc.owner ? owners.get(uc.owner.ownerId) : ''
          const [qs, controls] = await Promise.all([
            call(api.useCases.questionnaires.list(uc.id, { pageLimit: 20 })),
            call(api.useCases.controls.list(uc.id, { pageLimit: 100 })),
          ])
          for (const q of qs.data?.items ?? []) {
            const got = await call(api.useCases.questionnaires.get(uc.id, q.key))
            const p = got.data?.progress
            if (p && !p.complete) {
              found.push({
                kind: 'questionnaire',
                title: `Answer “${q.name}”`,
                detail: `${uc.name}: ${p.required - p.requiredAnswered} required answer(s) missing${forWhom ? `, ${forWhom}` : ''}`,
                href: `${base}#questionnaires`,
              })
            }
          }
          found.push(...controlItems(uc, controls.data?.items ?? [], owners, today))
          if (me.role !== 'read' && uc.workflowStageStep && uc.workflowStageStep !== 'clear') {
            found.push({
              kind: 'gate',
              title: `Move “${uc.name}” forward`,
              detail: `Waiting at ${label(STEP_LABEL, uc.workflowStageStep)}${forWhom ? `, ${forWhom}` : ''}`,
              href: `${base}#workflow`,
            })
          }
        }),
        ...others.map(async (uc) => {
          const controls = await call(api.useCases.controls.list(uc.id, { pageLimit: 100 }))
          found.push(...controlItems(uc, controls.data?.items ?? [], owners, today))
        }),
      ])
      if (live) setItems(sortInbox(found))
    })()
    return () => {
      live = false
    }
  }, [me])

  return (
    <Stack>
      <Title order={1}>Inbox</Title>
      <Text c="dimmed">What waits for you and your teams.</Text>
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
