import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Group,
  List,
  Loader,
  Modal,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useCallback, useEffect, useRef, useState } from 'react'
import { Link } from 'wouter'
import { api, call, problemOf } from '../api'
import { type MissingItem, missingItems, requirementAnchor } from '../gate'
import { CONTROL_STATUS_LABEL, formatDate, label, options, RISK_LABEL, STEP_LABEL } from '../labels'
import { useMe } from '../me-context'
import { ALL_SECTIONS, type PageSection, sectionsOf } from '../live'
import {
  type Attachment,
  loadQuestionnaires,
  type Questionnaire,
  QuestionnaireForm,
  Upload,
} from '../questionnaire-form'
import { useCustomFields } from '../custom-fields'
import { RecordForm } from '../RecordForm'

type Api = typeof api
type Awaited2<T> = T extends Promise<infer U> ? U : never
type DataOf<F extends (...a: never[]) => Promise<unknown>> = NonNullable<
  Awaited2<ReturnType<F>> extends { data: infer D } ? D : never
>
type UseCase = DataOf<Api['useCases']['get']>
type Control = DataOf<Api['useCases']['controls']['list']>['items'][number]
type Workflow = DataOf<Api['useCases']['workflow']['get']>
type AuditRecord = DataOf<Api['auditLogs']['list']>['items'][number]
type Linked = { id: string; name: string }

interface State {
  useCase: UseCase
  workflow: Workflow
  controls: Control[]
  questionnaires: { attachment: Attachment; definition: Questionnaire }[]
  models: Linked[]
  vendors: Linked[]
  riskScenarios: Linked[]
  history: AuditRecord[]
}

const named = (items: unknown[] | undefined): Linked[] =>
  (items ?? []).map((i) => {
    const r = i as { id?: string; riskScenarioId?: string; name?: string; riskScenarioName?: string }
    return { id: r.riskScenarioId ?? r.id ?? '', name: r.name ?? r.riskScenarioName ?? r.id ?? '' }
  })

/** Each section's reads: a change reloads only the sections it concerns (see sectionsOf). */
const LOAD: { [S in PageSection]: (id: string) => Promise<Partial<State> | string> } = {
  overview: async (id) => {
    const uc = await call(api.useCases.get(id))
    if (uc.error)
      return uc.error.status === 404 ? 'This use case does not exist, or you cannot see it.' : uc.error.message
    return { useCase: uc.data }
  },
  workflow: async (id) => ({ workflow: (await call(api.useCases.workflow.get(id))).data! }),
  controls: async (id) => ({
    controls: (await call(api.useCases.controls.list(id, { pageLimit: 100 }))).data?.items ?? [],
  }),
  questionnaires: async (id) => ({ questionnaires: await loadQuestionnaires({ kind: 'use_case', id }) }),
  links: async (id) => {
    const [models, vendors, scenarios] = await Promise.all([
      call(api.useCases.models.list(id, { pageLimit: 100 })),
      call(api.useCases.vendors.list(id, { pageLimit: 100 })),
      call(api.useCases.riskScenarios.list(id, { pageLimit: 100 })),
    ])
    return {
      models: named(models.data?.items),
      vendors: named(vendors.data?.items),
      riskScenarios: named(scenarios.data?.items),
    }
  },
  history: async (id) => ({
    history: (await call(api.auditLogs.list({ useCaseId: id, sort: '-created_at', pageLimit: 50 }))).data?.items ?? [],
  }),
}

/** The use case's page: overview, links, questionnaires answered in place, controls and evidence, workflow, history. */
export default function UseCasePage({ id }: { id: string }) {
  const me = useMe()
  const [state, setState] = useState<State | string | undefined>()
  const [missing, setMissing] = useState<MissingItem[]>([])
  const editing = useRef(new Set<string>())
  const canWrite = me.role !== 'read'
  const [editOpen, setEditOpen] = useState(false)
  const useCaseFields = useCustomFields('use_case')
  const current = useRef<State | undefined>(undefined)

  /** Which reload asked last for each section: an older read landing later never replaces a newer one. */
  const latest = useRef<Partial<Record<PageSection, number>>>({})
  const tickets = useRef(0)

  /** Reads the named sections again (the history too: every change is a line of it); all of them the first time. */
  const reload = useCallback(
    async (sections: readonly PageSection[] = ALL_SECTIONS) => {
      const first = current.current === undefined
      const wanted = first ? ALL_SECTIONS : [...new Set<PageSection>([...sections, 'history'])]
      const ticket = ++tickets.current
      for (const section of wanted) latest.current[section] = ticket
      const parts = await Promise.all(wanted.map(async (section) => ({ section, got: await LOAD[section](id) })))
      const failed = parts.find((p) => typeof p.got === 'string')
      if (failed) return setState(failed.got as string)
      // Until one read has landed there is nothing to keep; after, only what no newer read has asked for since.
      const fresh = parts
        .filter((p) => current.current === undefined || latest.current[p.section] === ticket)
        .map((p) => p.got)
      if (fresh.length === 0) return
      const next = Object.assign({}, current.current, ...fresh) as State
      current.current = next
      setState(next)
    },
    [id],
  )
  useEffect(() => {
    current.current = undefined
    void reload()
  }, [reload])

  // Live: another person's change reloads the sections it concerns; what is being typed is kept and flagged.
  useEffect(() => {
    const controller = new AbortController()
    void (async () => {
      try {
        for await (const event of api.events.stream({}, { signal: controller.signal })) {
          const r = event.record
          if (r.useCaseId !== id && r.resourceId !== id) continue
          if (me.user && r.actor?.id === me.user.id) continue
          notifications.show({
            title: 'Changed by someone else',
            message: `${r.actor?.name ?? 'Someone'} changed this use case${
              editing.current.size > 0 ? ': what you are typing is kept, check it before saving' : ''
            }.`,
            color: 'blue',
          })
          await reload(sectionsOf(r))
        }
      } catch {
        // The stream is refused (no access) or the page is left: the page still works without live updates.
      }
    })()
    return () => controller.abort()
  }, [id, me.user, reload])

  // A link to a section (#controls from the inbox or the controls list) lands on it once the page is drawn.
  const drawn = state !== undefined && typeof state !== 'string'
  useEffect(() => {
    const section = drawn && window.location.hash.slice(1)
    if (section) document.getElementById(decodeURIComponent(section))?.scrollIntoView()
  }, [drawn])

  if (state === undefined) return <Loader aria-label="Loading the use case" />
  if (typeof state === 'string') return <Alert color="red">{state}</Alert>
  const { useCase: uc, workflow } = state

  return (
    <Stack gap="lg">
      <Stack gap={4}>
        <Anchor component={Link} href="/use-cases" size="sm">
          ← All use cases
        </Anchor>
        <Title order={1}>{uc.name}</Title>
        <Group gap="xs">
          <Badge color={uc.riskCategoryLevel === 'high' ? 'red' : 'gray'}>
            Risk: {label(RISK_LABEL, uc.riskCategoryLevel)}
          </Badge>
          <Badge data-testid="stage">
            {workflow.workflowStage?.name ?? 'No stage'} · {label(STEP_LABEL, workflow.workflowStageStep)}
          </Badge>
        </Group>
      </Stack>

      <Section id="overview" title="Overview">
        {canWrite && (
          <Group>
            <Button variant="default" onClick={() => setEditOpen(true)}>
              Edit details
            </Button>
          </Group>
        )}
        <Modal opened={editOpen} onClose={() => setEditOpen(false)} title={`Edit ${uc.name}`} size="lg">
          <RecordForm
            kind="use_cases"
            record={uc as unknown as Record<string, unknown>}
            fields={useCaseFields}
            onSaved={() => {
              setEditOpen(false)
              notifications.show({ color: 'green', title: 'Saved', message: 'The use case is saved.' })
              void reload(['overview'])
            }}
          />
        </Modal>
        <Text>{uc.description || 'No description yet.'}</Text>
        <Table variant="vertical" withTableBorder>
          <Table.Tbody>
            <Table.Tr>
              <Table.Th w={180}>Owner</Table.Th>
              <Table.Td>{uc.owner?.name ?? 'Nobody'}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Regions</Table.Th>
              <Table.Td>{uc.regions?.join(', ') || '—'}</Table.Td>
            </Table.Tr>
            {(uc.customFields ?? []).map((f) => (
              <Table.Tr key={f.customFieldId}>
                <Table.Th>{f.name}</Table.Th>
                <Table.Td>{Array.isArray(f.value) ? f.value.join(', ') : String(f.value ?? '—')}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Section>

      <Section id="links" title="Models, vendors and risks">
        <LinkList
          title="Models"
          items={state.models}
          canWrite={canWrite}
          onUnlink={(m) => call(api.useCases.models.unlink(id, m)).then(() => reload(['links']))}
        />
        <LinkList
          title="Vendors"
          items={state.vendors}
          canWrite={canWrite}
          onUnlink={(v) => call(api.useCases.vendors.unlink(id, v)).then(() => reload(['links']))}
        />
        <LinkList
          title="Risk scenarios"
          items={state.riskScenarios}
          canWrite={canWrite}
          onUnlink={(r) => call(api.useCases.riskScenarios.unlink(id, r)).then(() => reload(['links']))}
        />
        {canWrite && <LinkPicker useCaseId={id} onLinked={() => reload(['links'])} />}
      </Section>

      <Section id="questionnaires" title="Questionnaires">
        {state.questionnaires.length === 0 && <Text>No questionnaire is attached.</Text>}
        {state.questionnaires.map((q) => (
          <QuestionnaireForm
            key={q.attachment.key}
            owner={{ kind: 'use_case', id }}
            attachment={q.attachment}
            definition={q.definition}
            canWrite={canWrite}
            editing={editing.current}
            onSaved={() => reload(['questionnaires'])}
          />
        ))}
      </Section>

      <Section id="controls" title="Controls">
        {state.controls.length === 0 && <Text>No policy pack is applied, so there are no controls.</Text>}
        {state.controls.map((c) => (
          <ControlCard
            key={c.id}
            useCaseId={id}
            control={c}
            canWrite={canWrite}
            onChanged={() => reload(['controls'])}
          />
        ))}
      </Section>

      <Section id="workflow" title="Workflow">
        <Text>
          Stage <b>{workflow.workflowStage?.name ?? '—'}</b>, step{' '}
          <b>{label(STEP_LABEL, workflow.workflowStageStep)}</b>
          {workflow.rejectionReason ? `. Rejected: ${workflow.rejectionReason}` : ''}
        </Text>
        {missing.length > 0 && (
          <Alert color="orange" title="Not yet: this step needs" role="alert">
            <List>
              {missing.map((m) => (
                <List.Item key={m.anchor + m.message}>
                  <Anchor href={`#${m.anchor}`}>{m.message}</Anchor>
                </List.Item>
              ))}
            </List>
          </Alert>
        )}
        {canWrite && (
          <WorkflowActions useCaseId={id} onMissing={setMissing} onMoved={() => reload(['workflow', 'overview'])} />
        )}
      </Section>

      <Section id="dossier" title="Dossier">
        <Text>Everything about this use case on one printable page.</Text>
        <Group>
          <Button
            component="a"
            href={`/api/v1/integration/use_cases/${id}/dossier?format=html`}
            target="_blank"
            rel="noopener"
            variant="light"
          >
            Open the dossier
          </Button>
        </Group>
      </Section>

      <Section id="history" title="History">
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Who</Table.Th>
              <Table.Th>What</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {state.history.map((h) => (
              <Table.Tr key={h.id}>
                <Table.Td>{formatDate(h.createdAt)}</Table.Td>
                <Table.Td>{h.actor?.name ?? h.actor?.id}</Table.Td>
                <Table.Td>{h.action.replace(/[._]/g, ' ')}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Section>
    </Stack>
  )
}

function Section({ id, title, children }: { id: string; title: string; children: React.ReactNode }) {
  return (
    <Card withBorder component="section" id={id} aria-labelledby={`${id}-title`} style={{ scrollMarginTop: 70 }}>
      <Stack>
        <Title order={2} size="h3" id={`${id}-title`}>
          {title}
        </Title>
        {children}
      </Stack>
    </Card>
  )
}

function LinkList(props: { title: string; items: Linked[]; canWrite: boolean; onUnlink: (id: string) => void }) {
  return (
    <Stack gap={4}>
      <Text fw={600}>{props.title}</Text>
      {props.items.length === 0 && <Text size="sm">None linked.</Text>}
      {props.items.map((item) => (
        <Group key={item.id} gap="xs">
          <Text size="sm">{item.name}</Text>
          {props.canWrite && (
            <Button
              size="compact-xs"
              variant="subtle"
              color="red"
              onClick={() => props.onUnlink(item.id)}
              aria-label={`Unlink ${item.name}`}
            >
              Unlink
            </Button>
          )}
        </Group>
      ))}
    </Stack>
  )
}

function LinkPicker({ useCaseId, onLinked }: { useCaseId: string; onLinked: () => void }) {
  const [kind, setKind] = useState<string | null>('model')
  const [query, setQuery] = useState('')
  const [choices, setChoices] = useState<{ value: string; label: string }[]>([])
  const [chosen, setChosen] = useState<string | null>(null)
  useEffect(() => {
    const q = query || undefined
    const list =
      kind === 'vendor'
        ? api.vendors.list({ q, pageLimit: 20 })
        : kind === 'risk'
          ? api.riskScenarios.list({ q, pageLimit: 20 })
          : api.models.list({ q, pageLimit: 20 })
    void call(list as Promise<{ data: { items: Linked[] }; error: null }>).then((r) =>
      setChoices((r.data?.items ?? []).map((i) => ({ value: i.id, label: i.name }))),
    )
  }, [kind, query])
  return (
    <Group align="flex-end" wrap="wrap">
      <Select
        label="Link a"
        data={[
          { value: 'model', label: 'Model' },
          { value: 'vendor', label: 'Vendor' },
          { value: 'risk', label: 'Risk scenario' },
        ]}
        value={kind}
        onChange={setKind}
        allowDeselect={false}
        w={160}
      />
      <Select
        label="Which one"
        searchable
        data={choices}
        value={chosen}
        onChange={setChosen}
        onSearchChange={setQuery}
        placeholder="Type to search"
        w={260}
      />
      <Button
        disabled={!chosen}
        onClick={async () => {
          if (!chosen) return
          const r =
            kind === 'vendor'
              ? await call(api.useCases.vendors.link(useCaseId, chosen))
              : kind === 'risk'
                ? await call(api.useCases.riskScenarios.link(useCaseId, { riskScenarioId: chosen }))
                : await call(api.useCases.models.link(useCaseId, chosen))
          if (r.error) notifications.show({ color: 'red', title: 'Not linked', message: r.error.message })
          setChosen(null)
          onLinked()
        }}
      >
        Link
      </Button>
    </Group>
  )
}

function ControlCard({
  useCaseId,
  control: c,
  canWrite,
  onChanged,
}: {
  useCaseId: string
  control: Control
  canWrite: boolean
  onChanged: () => void
}) {
  const [url, setUrl] = useState('')
  const link = async (evidenceId: string, requirement: number) => {
    const r = await call(api.useCases.controls.evidence.link(useCaseId, c.id, { evidenceId, requirement }))
    if (r.error) notifications.show({ color: 'red', title: 'Not attached', message: r.error.message })
    else notifications.show({ color: 'green', title: 'Evidence attached', message: c.name })
    onChanged()
  }
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap">
          <Title order={3} size="h4">
            {c.name}
          </Title>
          <Group gap="xs">
            <Text size="sm">Assigned to {c.assignee?.name ?? 'nobody'}</Text>
            <Text size="sm">{c.dueDate ? `due ${c.dueDate}` : 'no due date'}</Text>
          </Group>
        </Group>
        <Select
          label="Status"
          data={options(CONTROL_STATUS_LABEL)}
          value={c.status}
          disabled={!canWrite}
          allowDeselect={false}
          w={220}
          onChange={async (s) => {
            if (!s) return
            const r = await call(api.useCases.controls.update(useCaseId, c.id, { status: s as Control['status'] }))
            if (r.error) notifications.show({ color: 'red', title: 'Not saved', message: r.error.message })
            onChanged()
          }}
        />
        {c.evidenceRequirements.map((req) => (
          <Card withBorder key={req.requirement} id={requirementAnchor(c.id, req.requirement)} padding="sm">
            <Stack gap={4}>
              <Group gap="xs">
                <Text fw={500}>{req.description}</Text>
                {req.required && <Badge size="sm">Required</Badge>}
                <Badge size="sm" color={req.met ? 'teal.9' : 'red.9'}>
                  {req.met ? 'Evidence attached' : 'No evidence yet'}
                </Badge>
              </Group>
              {req.evidenceIds.map((e) => (
                <Anchor key={e} href={`/api/v1/integration/evidence/${e}/content`} size="sm">
                  Download {e}
                </Anchor>
              ))}
              {canWrite && (
                <>
                  <Upload
                    label={`Upload evidence for: ${req.description}`}
                    onUploaded={(ev) => link(ev, req.requirement)}
                  />
                  <Group align="flex-end">
                    <TextInput
                      label="Or a link to it"
                      placeholder="https://…"
                      value={url}
                      onChange={(e) => setUrl(e.currentTarget.value)}
                      w={300}
                    />
                    <Button
                      variant="light"
                      disabled={!url}
                      onClick={async () => {
                        const r = await call(api.evidence.createLink({ kind: 'link', url, title: req.description }))
                        if (r.error)
                          notifications.show({ color: 'red', title: 'Link refused', message: r.error.message })
                        else {
                          setUrl('')
                          await link(r.data.id, req.requirement)
                        }
                      }}
                    >
                      Attach link
                    </Button>
                  </Group>
                </>
              )}
            </Stack>
          </Card>
        ))}
      </Stack>
    </Card>
  )
}

function WorkflowActions({
  useCaseId,
  onMissing,
  onMoved,
}: {
  useCaseId: string
  onMissing: (m: MissingItem[]) => void
  onMoved: () => void
}) {
  const [reason, setReason] = useState('')
  const [message, setMessage] = useState<string | undefined>()
  return (
    <Stack gap="sm">
      <Group>
        <Button
          onClick={async () => {
            const r = await call(api.useCases.workflow.advance(useCaseId))
            if (r.error) {
              const problem = problemOf(r.error)
              if (problem.code === 'process_incomplete') onMissing(missingItems(problem.errors))
              else setMessage(problem.message)
              return
            }
            onMissing([])
            setMessage(undefined)
            notifications.show({
              color: 'green',
              title: 'Moved forward',
              message: 'The use case moved to its next step.',
            })
            onMoved()
          }}
        >
          Move forward
        </Button>
      </Group>
      {message && <Alert color="red">{message}</Alert>}
      <Group align="flex-end">
        <TextInput
          label="Reason for rejecting"
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value)}
          w={320}
        />
        <Button
          color="red"
          variant="light"
          disabled={!reason.trim()}
          onClick={async () => {
            const r = await call(api.useCases.workflow.reject(useCaseId, reason.trim()))
            if (r.error) setMessage(r.error.message)
            else {
              setReason('')
              onMoved()
            }
          }}
        >
          Reject
        </Button>
      </Group>
    </Stack>
  )
}
