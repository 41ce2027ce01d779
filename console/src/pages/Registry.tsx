import {
  Alert,
  Anchor,
  Button,
  Group,
  Loader,
  Modal,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Textarea,
  Title,
} from '@mantine/core'
import { useDebouncedCallback, useDisclosure } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { useEffect, useState } from 'react'
import { Link, useLocation, useSearch } from 'wouter'
import { api, call, problemOf } from '../api'
import { formatDate, label, MODEL_STATUS_LABEL, options, RISK_LABEL, STEP_LABEL, VENDOR_STATUS_LABEL } from '../labels'
import { useMe } from '../me-context'
import { apiQuery, parseRegistryQuery, type RegistryQuery, withChange } from '../registry-query'
import { CustomFieldInput, type CustomFieldDef, useCustomFields, useUserChoices } from '../custom-fields'

type Kind = 'use_cases' | 'models' | 'vendors'
type Row = {
  id: string
  name: string
  riskCategoryLevel?: string | null
  status?: string | null
  owner?: { name?: string | null } | null
  workflowStageStep?: string | null
  updatedAt: string
}
type Page = { items: Row[]; pagination: { hasMore: boolean; nextCursor: string | null } }

const TITLES: Record<Kind, string> = { use_cases: 'Use cases', models: 'Models', vendors: 'Vendors' }
const SINGULAR: Record<Kind, string> = { use_cases: 'use case', models: 'model', vendors: 'vendor' }
const PATHS: Record<Kind, string> = { use_cases: '/use-cases', models: '/models', vendors: '/vendors' }
const ENTITY: Record<Kind, string> = { use_cases: 'use_case', models: 'model', vendors: 'vendor' }

function list(
  kind: Kind,
  q: RegistryQuery,
): Promise<{ data: Page | null; error: { message: string; status?: number } | null }> {
  const query = apiQuery(kind, q) as never
  const p =
    kind === 'models' ? api.models.list(query) : kind === 'vendors' ? api.vendors.list(query) : api.useCases.list(query)
  return call(p as never)
}

/** A registry table: search, filters, sort and cursor paging, all kept in the address. */
export default function Registry({ kind }: { kind: Kind }) {
  const me = useMe()
  const search = useSearch()
  const [, navigate] = useLocation()
  const q = parseRegistryQuery(search)
  const [page, setPage] = useState<Page | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [history, setHistory] = useState<string[]>([])
  const [opened, { open, close }] = useDisclosure(false)
  const [text, setText] = useState(q.q ?? '')
  const fields = useCustomFields(ENTITY[kind])
  const users = useUserChoices()
  const go = (change: Partial<RegistryQuery>) => navigate(`${PATHS[kind]}${withChange(q, change)}`)
  const searchLater = useDebouncedCallback((value: string) => go({ q: value || undefined }), 300)

  // biome-ignore lint/correctness/useExhaustiveDependencies: the address is the state
  useEffect(() => {
    let live = true
    setPage(undefined)
    void list(kind, q).then((r) => {
      if (!live) return
      if (r.error) setError(problemOf(r.error).message)
      else {
        setError(undefined)
        setPage(r.data!)
      }
    })
    return () => {
      live = false
    }
  }, [kind, search])

  const statusMap = kind === 'models' ? MODEL_STATUS_LABEL : VENDOR_STATUS_LABEL
  const selectFields = fields.filter((f) => f.elementType === 'select' || f.type === 'boolean')
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>{TITLES[kind]}</Title>
        {me.role !== 'read' && <Button onClick={open}>New {SINGULAR[kind]}</Button>}
      </Group>
      <Group align="flex-end" wrap="wrap">
        <TextInput
          label="Search by name"
          value={text}
          onChange={(e) => {
            setText(e.currentTarget.value)
            searchLater(e.currentTarget.value)
          }}
          w={240}
        />
        {kind === 'use_cases' ? (
          <Select
            label="Risk level"
            clearable
            data={options(RISK_LABEL)}
            value={q.risk ?? null}
            onChange={(v) => go({ risk: v ?? undefined })}
            w={150}
          />
        ) : (
          <Select
            label="Status"
            clearable
            data={options(statusMap)}
            value={q.status ?? null}
            onChange={(v) => go({ status: v ?? undefined })}
            w={170}
          />
        )}
        <Select
          label="Owner"
          clearable
          searchable
          data={users}
          value={q.owner ?? null}
          onChange={(v) => go({ owner: v ?? undefined })}
          w={200}
        />
        {selectFields.length > 0 && (
          <>
            <Select
              label="Custom field"
              clearable
              data={selectFields.map((f) => ({ value: f.id, label: f.name }))}
              value={q.field ?? null}
              onChange={(v) => go({ field: v ?? undefined, value: undefined })}
              w={180}
            />
            {q.field && (
              <Select
                label="Value"
                clearable
                data={(() => {
                  const f = selectFields.find((x) => x.id === q.field)
                  return f?.type === 'boolean'
                    ? [
                        { value: 'true', label: 'Yes' },
                        { value: 'false', label: 'No' },
                      ]
                    : (f?.options ?? [])
                })()}
                value={q.value ?? null}
                onChange={(v) => go({ value: v ?? undefined })}
                w={160}
              />
            )}
          </>
        )}
        <Select
          label="Sort by"
          allowDeselect={false}
          data={[
            { value: '-created_at', label: 'Newest first' },
            { value: 'created_at', label: 'Oldest first' },
            { value: 'name', label: 'Name A–Z' },
            { value: '-name', label: 'Name Z–A' },
            { value: '-updated_at', label: 'Recently changed' },
          ]}
          value={q.sort}
          onChange={(v) => go({ sort: v ?? '-created_at' })}
          w={180}
        />
      </Group>
      {error && <Alert color="red">{error}</Alert>}
      {!page && !error && <Loader aria-label="Loading" />}
      {page && (
        <Table.ScrollContainer minWidth={560}>
          <Table striped highlightOnHover data-testid="registry-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                {kind === 'use_cases' ? <Table.Th>Risk</Table.Th> : <Table.Th>Status</Table.Th>}
                {kind === 'use_cases' && <Table.Th>Step</Table.Th>}
                <Table.Th>Owner</Table.Th>
                <Table.Th>Changed</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {page.items.map((row) => (
                <Table.Tr key={row.id}>
                  <Table.Td>
                    {kind === 'use_cases' ? (
                      <Anchor component={Link} href={`/use-cases/${row.id}`}>
                        {row.name}
                      </Anchor>
                    ) : (
                      row.name
                    )}
                  </Table.Td>
                  {kind === 'use_cases' ? (
                    <Table.Td>{label(RISK_LABEL, row.riskCategoryLevel)}</Table.Td>
                  ) : (
                    <Table.Td>{label(statusMap, row.status)}</Table.Td>
                  )}
                  {kind === 'use_cases' && <Table.Td>{label(STEP_LABEL, row.workflowStageStep)}</Table.Td>}
                  <Table.Td>{row.owner?.name ?? '—'}</Table.Td>
                  <Table.Td>{formatDate(row.updatedAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {page.items.length === 0 && <Text p="md">Nothing matches.</Text>}
        </Table.ScrollContainer>
      )}
      <Group>
        <Button
          variant="default"
          disabled={history.length === 0}
          onClick={() => {
            const prev = history[history.length - 1]
            setHistory((h) => h.slice(0, -1))
            go({ after: prev || undefined })
          }}
        >
          Previous page
        </Button>
        <Button
          variant="default"
          disabled={!page?.pagination.hasMore}
          onClick={() => {
            setHistory((h) => [...h, q.after ?? ''])
            go({ after: page?.pagination.nextCursor ?? undefined })
          }}
        >
          Next page
        </Button>
      </Group>
      <Modal opened={opened} onClose={close} title={`New ${SINGULAR[kind]}`} size="lg">
        <CreateForm
          kind={kind}
          fields={fields}
          onCreated={(id) => {
            close()
            notifications.show({ color: 'green', title: 'Created', message: `The ${SINGULAR[kind]} is saved.` })
            if (kind === 'use_cases') navigate(`/use-cases/${id}`)
            else go({})
          }}
        />
      </Modal>
    </Stack>
  )
}

/** The create form: the record's own fields, then its custom fields by type; refusals shown next to their field. */
function CreateForm({
  kind,
  fields,
  onCreated,
}: {
  kind: Kind
  fields: CustomFieldDef[]
  onCreated: (id: string) => void
}) {
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [choice, setChoice] = useState<string | null>(null)
  const [custom, setCustom] = useState<Record<string, unknown>>({})
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [general, setGeneral] = useState<string | undefined>()
  const descriptionField = kind === 'models' ? 'summary' : 'description'
  const choiceField = kind === 'use_cases' ? 'risk_category_level' : 'status'
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault()
        const body: Record<string, unknown> = { name }
        if (description) body[kind === 'models' ? 'summary' : 'description'] = description
        if (choice) body[kind === 'use_cases' ? 'riskCategoryLevel' : 'status'] = choice
        const values = Object.entries(custom).filter(([, v]) => v !== undefined && v !== '' && v !== null)
        if (values.length) body.customFields = values.map(([customFieldId, value]) => ({ customFieldId, value }))
        const p =
          kind === 'models'
            ? api.models.create(body as never)
            : kind === 'vendors'
              ? api.vendors.create(body as never)
              : api.useCases.create(body as never)
        const r = (await call(p as never)) as {
          data: { id: string } | null
          error: { message: string; body?: unknown } | null
        }
        if (r.error) {
          const problem = problemOf(r.error)
          const byField: Record<string, string> = {}
          for (const fe of problem.errors)
            if (fe.field) byField[fe.field.replace(/^\/?(body\/)?/, '')] = fe.message ?? 'not valid'
          setErrors(byField)
          setGeneral(problem.message)
          return
        }
        onCreated(r.data!.id)
      }}
    >
      <Stack>
        {general && (
          <Alert color="red" title="Not saved">
            {general}
          </Alert>
        )}
        <TextInput
          label="Name"
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={errors.name}
        />
        <Textarea
          label={kind === 'models' ? 'Summary' : 'Description'}
          autosize
          minRows={2}
          value={description}
          onChange={(e) => setDescription(e.currentTarget.value)}
          error={errors[descriptionField]}
        />
        <Select
          label={kind === 'use_cases' ? 'Risk level' : 'Status'}
          clearable
          data={options(
            kind === 'use_cases' ? RISK_LABEL : kind === 'models' ? MODEL_STATUS_LABEL : VENDOR_STATUS_LABEL,
          )}
          value={choice}
          onChange={setChoice}
          error={errors[choiceField]}
        />
        {fields.map((f, i) => (
          <CustomFieldInput
            key={f.id}
            field={f}
            value={custom[f.id]}
            onChange={(v) => setCustom((c) => ({ ...c, [f.id]: v }))}
            error={errors[`custom_fields/${i}/value`] ?? errors[`custom_fields/${f.id}`]}
          />
        ))}
        <Group justify="flex-end">
          <Button type="submit">Save</Button>
        </Group>
      </Stack>
    </form>
  )
}
