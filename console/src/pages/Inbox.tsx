import { Alert, Anchor, Badge, Card, Group, List, Loader, Stack, Text, Title } from '@mantine/core'
import { useEffect, useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api'
import {
  controlItems,
  controlsCut,
  INBOX_BOUNDS,
  type InboxCut,
  type InboxItem,
  mapLimit,
  type Owners,
  ownersOf,
  type PageLike,
  questionnaireItems,
  type RecordKind,
  readPages,
  recordsCut,
  sortInbox,
} from '../inbox'
import { label, STEP_LABEL } from '../labels'
import { useMe } from '../me-context'

type Result<T> = { data?: T | null; error?: { message: string; status?: number } | null }

/** The page a call answered, or a thrown error the inbox shows. */
async function page<T>(request: Promise<Result<PageLike<T>>>): Promise<PageLike<T>> {
  const r = await call(request as Promise<Result<PageLike<T>> & { error: { status?: number } | null }>)
  if (r.error || !r.data) throw new Error(r.error?.message ?? 'The service did not answer.')
  return r.data
}

interface Owned {
  kind: RecordKind
  id: string
  name: string
  owner?: { ownerId: string } | null
  questionnaireIds?: string[]
  workflowStageStep?: string | null
}

const LIST: Record<RecordKind, (q: { ownerId: string; pageLimit: number; pageAfter?: string }) => Promise<unknown>> = {
  use_case: (q) => api.useCases.list({ ...q, sort: '-updated_at' }),
  model: (q) => api.models.list({ ...q, sort: '-updated_at' }),
  vendor: (q) => api.vendors.list({ ...q, sort: '-updated_at' }),
}
const QUESTIONNAIRES: Record<
  RecordKind,
  (id: string, q: { pageLimit: number; pageAfter?: string }) => Promise<unknown>
> = {
  use_case: (id, q) => api.useCases.questionnaires.list(id, q),
  model: (id, q) => api.models.questionnaires.list(id, q),
  vendor: (id, q) => api.vendors.questionnaires.list(id, q),
}

/** Every page of a record's list (questionnaires, controls): a record holds few, so these are read to their end. */
const all = async <T,>(read: (q: { pageLimit: number; pageAfter?: string }) => Promise<unknown>) =>
  (
    await readPages<T>(
      (after, pageLimit) =>
        page(read({ pageLimit, ...(after ? { pageAfter: after } : {}) }) as Promise<Result<PageLike<T>>>),
      Number.POSITIVE_INFINITY,
    )
  ).items

/** What waits for the person: it reads every list with its cursor, up to INBOX_BOUNDS, and says where it stopped. */
async function loadInbox(
  userId: string,
  canMove: boolean,
  today: string,
): Promise<{ items: InboxItem[]; cuts: InboxCut[] }> {
  const cuts: InboxCut[] = []
  const teams = await readPages(
    (after, pageLimit) =>
      page(api.teams.list({ memberId: userId, sort: 'name', pageLimit, ...(after ? { pageAfter: after } : {}) })),
    INBOX_BOUNDS.teams,
  )
  if (teams.more)
    cuts.push({
      text: `You are in more than ${INBOX_BOUNDS.teams} teams; the inbox looks at what the first ${INBOX_BOUNDS.teams} (by name) own`,
    })
  const owners: Owners = ownersOf(userId, teams.items)

  // The records of each kind owned by the person or a team, and the open controls assigned to each, all at once;
  // overdue controls are read apart so that a bound never cuts one of them before a control that is not overdue.
  const kinds: RecordKind[] = ['use_case', 'model', 'vendor']
  const ownerIds = [...owners.keys()]
  const teamName = (ownerId: string) => teams.items.find((t) => t.id === ownerId)?.name ?? ''
  const pairs = kinds.flatMap((kind) => ownerIds.map((ownerId) => ({ kind, ownerId })))
  const controlReads = ownerIds.flatMap((ownerId) => [true, false].map((overdue) => ({ ownerId, overdue })))
  const [lists, controls] = await Promise.all([
    mapLimit(pairs, INBOX_BOUNDS.parallel, async ({ kind, ownerId }) => {
      const got = await readPages<Omit<Owned, 'kind'>>(
        (after, pageLimit) =>
          page(
            LIST[kind]({ ownerId, pageLimit, ...(after ? { pageAfter: after } : {}) }) as Promise<
              Result<PageLike<Omit<Owned, 'kind'>>>
            >,
          ),
        INBOX_BOUNDS.recordsPerOwner,
      )
      if (got.more) cuts.push(recordsCut(kind, ownerId, teamName(ownerId), got.items.length))
      return got.items.map((r) => ({ ...r, kind }))
    }),
    mapLimit(controlReads, INBOX_BOUNDS.parallel, async ({ ownerId, overdue }) => {
      const got = await readPages<Parameters<typeof controlItems>[0][number]>(
        (after, pageLimit) =>
          page(
            api.useCaseControls.list({
              assigneeId: ownerId,
              open: true,
              overdue,
              pageLimit,
              ...(after ? { pageAfter: after } : {}),
            }),
          ),
        INBOX_BOUNDS.controlsPerOwner,
      )
      if (got.more) cuts.push(controlsCut(teamName(ownerId), overdue, got.items.length))
      return got.items
    }),
  ])
  const owned = new Map<string, Owned>()
  for (const r of lists.flat()) owned.set(r.id, r)

  const found = await mapLimit([...owned.values()], INBOX_BOUNDS.parallel, async (record): Promise<InboxItem[]> => {
    const out: InboxItem[] = []
    const isUseCase = record.kind === 'use_case'
    // A use case's list item names its questionnaires: none attached, nothing to read.
    if (!isUseCase || (record.questionnaireIds?.length ?? 0) > 0) {
      const attachments = await all<Parameters<typeof questionnaireItems>[1][number]>((q) =>
        QUESTIONNAIRES[record.kind](record.id, q),
      )
      out.push(...questionnaireItems(record, attachments, owners))
    }
    if (isUseCase && canMove && record.workflowStageStep && record.workflowStageStep !== 'clear') {
      const forWhom = record.owner ? owners.get(record.owner.ownerId) : ''
      out.push({
        kind: 'gate',
        title: `Move “${record.name}” forward`,
        detail: `Waiting at ${label(STEP_LABEL, record.workflowStageStep)}${forWhom ? `, ${forWhom}` : ''}`,
        href: `/use-cases/${record.id}#workflow`,
      })
    }
    return out
  })
  return { items: sortInbox([...found.flat(), ...controlItems(controls.flat(), owners, today)]), cuts }
}

/** What waits for me: missing answers, my controls (overdue first), use cases at a gate I can move on. */
export function Inbox() {
  const me = useMe()
  const [state, setState] = useState<{ items: InboxItem[]; cuts: InboxCut[] } | undefined>()
  const [error, setError] = useState<string | undefined>()

  useEffect(() => {
    if (!me.user) {
      setState({ items: [], cuts: [] })
      return
    }
    let live = true
    loadInbox(me.user.id, me.role !== 'read', new Date().toISOString().slice(0, 10)).then(
      (got) => live && setState(got),
      (err: Error) => live && setError(err.message),
    )
    return () => {
      live = false
    }
  }, [me])

  const items = state?.items
  return (
    <Stack>
      <Title order={1}>Inbox</Title>
      <Text c="dimmed">What waits for you and your teams.</Text>
      {error && <Alert color="red">{error}</Alert>}
      {!state && !error && <Loader aria-label="Loading the inbox" />}
      {state && state.cuts.length > 0 && (
        <Alert color="yellow" title="Not everything is listed here" data-testid="inbox-cuts">
          <List size="sm">
            {state.cuts.map((cut) => (
              <List.Item key={cut.text}>
                {cut.href ? (
                  <Anchor component={Link} href={cut.href} size="sm">
                    {cut.text}
                  </Anchor>
                ) : (
                  cut.text
                )}
              </List.Item>
            ))}
          </List>
        </Alert>
      )}
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
