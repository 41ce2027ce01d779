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
  MultiSelect,
  NumberInput,
  Progress,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { Dropzone } from '@mantine/dropzone'
import { notifications } from '@mantine/notifications'
import { useCallback, useEffect, useRef, useState } from 'react'
import { Link } from 'wouter'
import { api, call, problemOf } from '../api'
import { type MissingItem, missingItems, questionAnchor, requirementAnchor } from '../gate'
import { CONTROL_STATUS_LABEL, formatDate, label, options, RISK_LABEL, STEP_LABEL } from '../labels'
import { useMe } from '../me-context'
import { formatBytes, tooLarge } from '../bytes'
import { uploadEvidence, useUploadLimit } from '../upload'
import { useCustomFields } from '../custom-fields'
import { RecordForm } from '../RecordForm'

type Api = typeof api
type Awaited2<T> = T extends Promise<infer U> ? U : never
type DataOf<F extends (...a: never[]) => Promise<unknown>> = NonNullable<
  Awaited2<ReturnType<F>> extends { data: infer D } ? D : never
>
type UseCase = DataOf<Api['useCases']['get']>
type Control = DataOf<Api['useCases']['controls']['list']>['items'][number]
type Attachment = DataOf<Api['useCases']['questionnaires']['get']>
type Questionnaire = DataOf<Api['questionnaires']['get']>
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

async function loadAll(id: string): Promise<State | string> {
  const [uc, wf, controls, qs, models, vendors, scenarios, history] = await Promise.all([
    call(api.useCases.get(id)),
    call(api.useCases.workflow.get(id)),
    call(api.useCases.controls.list(id, { pageLimit: 100 })),
    call(api.useCases.questionnaires.list(id, { pageLimit: 20 })),
    call(api.useCases.models.list(id, { pageLimit: 100 })),
    call(api.useCases.vendors.list(id, { pageLimit: 100 })),
    call(api.useCases.riskScenarios.list(id, { pageLimit: 100 })),
    call(api.auditLogs.list({ useCaseId: id, sort: '-created_at', pageLimit: 50 })),
  ])
  if (uc.error)
    return uc.error.status === 404 ? 'This use case does not exist, or you cannot see it.' : uc.error.message
  const questionnaires = await Promise.all(
    (qs.data?.items ?? []).map(async (q) => {
      const [attachment, definition] = await Promise.all([
        call(api.useCases.questionnaires.get(id, q.key)),
        call(api.questionnaires.get(q.key, { version: q.version })),
      ])
      return attachment.data && definition.data ? { attachment: attachment.data, definition: definition.data } : null
    }),
  )
  const named = (items: unknown[] | undefined): Linked[] =>
    (items ?? []).map((i) => {
      const r = i as { id?: string; riskScenarioId?: string; name?: string; riskScenarioName?: string }
      return { id: r.riskScenarioId ?? r.id ?? '', name: r.name ?? r.riskScenarioName ?? r.id ?? '' }
    })
  return {
    useCase: uc.data,
    workflow: wf.data!,
    controls: controls.data?.items ?? [],
    questionnaires: questionnaires.filter((q) => q !== null),
    models: named(models.data?.items),
    vendors: named(vendors.data?.items),
    riskScenarios: named(scenarios.data?.items),
    history: history.data?.items ?? [],
  }
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

  const reload = useCallback(async () => setState(await loadAll(id)), [id])
  useEffect(() => {
    void reload()
  }, [reload])

  // Live: another person's change to this use case reloads the page; what is being typed is kept and flagged.
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
          await reload()
        }
      } catch {
        // The stream is refused (no access) or the page is left: the page still works without live updates.
      }
    })()
    return () => controller.abort()
  }, [id, me.user, reload])

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
              void reload()
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
          onUnlink={(m) => call(api.useCases.models.unlink(id, m)).then(reload)}
        />
        <LinkList
          title="Vendors"
          items={state.vendors}
          canWrite={canWrite}
          onUnlink={(v) => call(api.useCases.vendors.unlink(id, v)).then(reload)}
        />
        <LinkList
          title="Risk scenarios"
          items={state.riskScenarios}
          canWrite={canWrite}
          onUnlink={(r) => call(api.useCases.riskScenarios.unlink(id, r)).then(reload)}
        />
        {canWrite && <LinkPicker useCaseId={id} onLinked={reload} />}
      </Section>

      <Section id="questionnaires" title="Questionnaires">
        {state.questionnaires.length === 0 && <Text>No questionnaire is attached.</Text>}
        {state.questionnaires.map((q) => (
          <QuestionnaireForm
            key={q.attachment.key}
            useCaseId={id}
            attachment={q.attachment}
            definition={q.definition}
            canWrite={canWrite}
            editing={editing.current}
            onSaved={reload}
          />
        ))}
      </Section>

      <Section id="controls" title="Controls">
        {state.controls.length === 0 && <Text>No policy pack is applied, so there are no controls.</Text>}
        {state.controls.map((c) => (
          <ControlCard key={c.id} useCaseId={id} control={c} canWrite={canWrite} onChanged={reload} />
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
        {canWrite && <WorkflowActions useCaseId={id} onMissing={setMissing} onMoved={reload} />}
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

type AnswerValue = string | number | boolean | string[] | null

function QuestionnaireForm(props: {
  useCaseId: string
  attachment: Attachment
  definition: Questionnaire
  canWrite: boolean
  editing: Set<string>
  onSaved: () => void
}) {
  const { attachment, definition } = props
  const saved = new Map(attachment.answers.map((a) => [a.questionId, a.value as AnswerValue]))
  const [drafts, setDrafts] = useState<Record<string, AnswerValue>>({})
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [saving, setSaving] = useState(false)
  const p = attachment.progress

  const save = async (questionId: string, value: AnswerValue) => {
    setSaving(true)
    const r = await call(
      api.useCases.questionnaires.answer(props.useCaseId, attachment.key, {
        answers: [{ questionId, value: value === '' ? null : value }],
      }),
    )
    setSaving(false)
    props.editing.delete(`${attachment.key}/${questionId}`)
    if (r.error) {
      const problem = problemOf(r.error)
      setErrors((e) => ({ ...e, [questionId]: problem.errors[0]?.message ?? problem.message }))
      return
    }
    setErrors(({ [questionId]: _, ...rest }) => rest)
    setDrafts(({ [questionId]: _, ...rest }) => rest)
    props.onSaved()
  }
  const answerOf = (qid: string) => (qid in drafts ? drafts[qid] : (saved.get(qid) ?? null))
  const edit = (qid: string, value: AnswerValue) => {
    props.editing.add(`${attachment.key}/${qid}`)
    setDrafts((d) => ({ ...d, [qid]: value }))
  }

  return (
    <Card withBorder>
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4">
            {attachment.name}
          </Title>
          <Text size="sm" aria-live="polite">
            {saving ? 'Saving…' : `${p.requiredAnswered} of ${p.required} required answered`}
          </Text>
        </Group>
        <Progress
          value={p.required === 0 ? 100 : (100 * p.requiredAnswered) / p.required}
          aria-label={`${attachment.name}: progress`}
        />
        {definition.sections.map((section) => (
          <Stack key={section.id} gap="sm">
            <Title order={4} size="h5">
              {section.title}
            </Title>
            {section.questions.map((q) => {
              const anchor = questionAnchor(attachment.key, q.id)
              const common = {
                id: anchor,
                label: q.question,
                required: q.required,
                withAsterisk: q.required,
                error: errors[q.id],
                disabled: !props.canWrite,
              }
              const v = answerOf(q.id)
              switch (q.evidenceType) {
                case 'number':
                  return (
                    <NumberInput
                      key={q.id}
                      {...common}
                      value={typeof v === 'number' ? v : ''}
                      onChange={(n) => edit(q.id, typeof n === 'number' ? n : null)}
                      onBlur={() => q.id in drafts && save(q.id, answerOf(q.id))}
                    />
                  )
                case 'boolean':
                  return (
                    <Select
                      key={q.id}
                      {...common}
                      data={[
                        { value: 'true', label: 'Yes' },
                        { value: 'false', label: 'No' },
                      ]}
                      value={v === null ? null : String(v)}
                      onChange={(s) => save(q.id, s === null ? null : s === 'true')}
                    />
                  )
                case 'select':
                  return q.multiple ? (
                    <MultiSelect
                      key={q.id}
                      {...common}
                      data={q.selectOptions}
                      value={Array.isArray(v) ? v : []}
                      onChange={(s) => save(q.id, s.length ? s : null)}
                    />
                  ) : (
                    <Select
                      key={q.id}
                      {...common}
                      data={q.selectOptions}
                      value={typeof v === 'string' ? v : null}
                      onChange={(s) => save(q.id, s)}
                    />
                  )
                case 'file':
                  return (
                    <Stack key={q.id} gap={4} id={anchor}>
                      <Text size="sm" fw={500}>
                        {q.question}
                        {q.required ? ' *' : ''}
                      </Text>
                      <Text size="sm">
                        {Array.isArray(v) && v.length ? `Attached: ${v.join(', ')}` : 'No file yet.'}
                      </Text>
                      {props.canWrite && (
                        <Upload label={`Upload a file for: ${q.question}`} onUploaded={(ev) => save(q.id, ev)} />
                      )}
                      {errors[q.id] && (
                        <Text c="red" size="sm">
                          {errors[q.id]}
                        </Text>
                      )}
                    </Stack>
                  )
                default:
                  return (
                    <Textarea
                      key={q.id}
                      {...common}
                      autosize
                      minRows={1}
                      value={typeof v === 'string' ? v : ''}
                      onChange={(e) => edit(q.id, e.currentTarget.value)}
                      onBlur={() => q.id in drafts && save(q.id, answerOf(q.id))}
                    />
                  )
              }
            })}
          </Stack>
        ))}
      </Stack>
    </Card>
  )
}

/** A file dropped or chosen becomes evidence (up to the service's limit, with a progress bar); gives its id back. */
function Upload({ label: text, onUploaded }: { label: string; onUploaded: (evidenceId: string) => void }) {
  const [share, setShare] = useState<number | undefined>()
  const [refusal, setRefusal] = useState<string | undefined>()
  const maxBytes = useUploadLimit()
  const percent = share === undefined ? 0 : Math.round(share * 100)
  return (
    <Stack gap={4}>
      <Dropzone
        loading={share !== undefined}
        multiple={false}
        maxSize={maxBytes}
        onReject={(rejected) => {
          const file = rejected[0]?.file
          setRefusal(file ? (tooLarge(file.size, maxBytes) ?? rejected[0]?.errors[0]?.message) : undefined)
        }}
        onDrop={async (files) => {
          const file = files[0]
          if (!file) return
          const refused = tooLarge(file.size, maxBytes)
          setRefusal(refused)
          if (refused) return
          setShare(0)
          const r = await uploadEvidence(file, setShare)
          setShare(undefined)
          if (r.error) setRefusal(`Upload refused: ${problemOf(r.error).message}`)
          else onUploaded(r.data.id)
        }}
        aria-label={text}
        p="sm"
      >
        <Text size="sm" ta="center">
          Drop a file here, or press to choose one{maxBytes ? ` (up to ${formatBytes(maxBytes)})` : ''}
        </Text>
      </Dropzone>
      {share !== undefined && (
        <Group gap="xs" wrap="nowrap">
          <Progress value={percent} flex={1} aria-label={`Uploading: ${percent}%`} data-testid="upload-progress" />
          <Text size="xs" aria-live="polite">
            {percent}%
          </Text>
        </Group>
      )}
      {refusal && (
        <Text c="red.9" size="sm" role="alert">
          {refusal}
        </Text>
      )}
    </Stack>
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
