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
  VisuallyHidden,
  Title,
} from '@mantine/core'
import { useDebouncedCallback, useDisclosure } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { useEffect, useState } from 'react'
import { Link, useLocation, useSearch } from 'wouter'
import { api, call, problemOf } from '../api'
import {
  COMPLETION_LABEL,
  CONTROL_STATUS_LABEL,
  formatDate,
  label,
  MODEL_STATUS_LABEL,
  options,
  RISK_LABEL,
  STEP_LABEL,
  VENDOR_STATUS_LABEL,
} from '../labels'
import { useMe } from '../me-context'
import { apiQuery, parseRegistryQuery, type RegistryQuery, withChange } from '../registry-query'
import { useCustomFields, useUserChoices } from '../custom-fields'
import { Pager } from '../Pager'
import { RecordForm } from '../RecordForm'

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

/** The tenant's workflow stages, in order, to filter use cases by. */
function useStageChoices(wanted: boolean): { value: string; label: string }[] {
  const [stages, setStages] = useState<{ value: string; label: string }[]>([])
  useEffect(() => {
    if (!wanted) return
    void call(api.workflowStages.list({ pageLimit: 100 })).then((r) =>
      setStages((r.data?.items ?? []).map((s) => ({ value: s.id, label: s.name }))),
    )
  }, [wanted])
  return stages
}

/** A registry table: search, filters, sort and cursor paging, all kept in the address. */
export default function Registry({ kind }: { kind: Kind }) {
  const me = useMe()
  const search = useSearch()
  const [, navigate] = useLocation()
  const q = parseRegistryQuery(search)
  const [page, setPage] = useState<Page | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [opened, { open, close }] = useDisclosure(false)
  const [editing, setEditing] = useState<Record<string, unknown> | undefined>()
  const [text, setText] = useState(q.q ?? '')
  const fields = useCustomFields(ENTITY[kind])
  const users = useUserChoices()
  const stages = useStageChoices(kind === 'use_cases')
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
        {kind === 'use_cases' && (
          <>
            <Select
              label="Stage"
              clearable
              data={stages}
              value={q.stage ?? null}
              onChange={(v) => go({ stage: v ?? undefined })}
              w={180}
            />
            <Select
              label="Step"
              clearable
              data={options(STEP_LABEL)}
              value={q.step ?? null}
              onChange={(v) => go({ step: v ?? undefined })}
              w={190}
            />
            <Select
              label="Has a control that is"
              clearable
              data={options(CONTROL_STATUS_LABEL)}
              value={q.control ?? null}
              onChange={(v) => go({ control: v ?? undefined })}
              w={190}
            />
            <Select
              label="Overdue controls"
              clearable
              data={[
                { value: 'true', label: 'Some overdue' },
                { value: 'false', label: 'None overdue' },
              ]}
              value={q.overdue ?? null}
              onChange={(v) => go({ overdue: v ?? undefined })}
              w={170}
            />
            <Select
              label="Questionnaires"
              clearable
              data={options(COMPLETION_LABEL)}
              value={q.questionnaires ?? null}
              onChange={(v) => go({ questionnaires: v ?? undefined })}
              w={180}
            />
          </>
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
                {kind !== 'use_cases' && me.role !== 'read' && (
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                )}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {page.items.map((row) => (
                <Table.Tr key={row.id}>
                  <Table.Td>
                    <Anchor component={Link} href={`/${kind.replace('_', '-')}/${row.id}`}>
                      {row.name}
                    </Anchor>
                  </Table.Td>
                  {kind === 'use_cases' ? (
                    <Table.Td>{label(RISK_LABEL, row.riskCategoryLevel)}</Table.Td>
                  ) : (
                    <Table.Td>{label(statusMap, row.status)}</Table.Td>
                  )}
                  {kind === 'use_cases' && <Table.Td>{label(STEP_LABEL, row.workflowStageStep)}</Table.Td>}
                  <Table.Td>{row.owner?.name ?? '—'}</Table.Td>
                  <Table.Td>{formatDate(row.updatedAt)}</Table.Td>
                  {kind !== 'use_cases' && me.role !== 'read' && (
                    <Table.Td>
                      <Button
                        size="compact-sm"
                        variant="default"
                        aria-label={`Edit ${row.name}`}
                        onClick={async () => {
                          const r = await call(
                            (kind === 'models' ? api.models.get(row.id) : api.vendors.get(row.id)) as Promise<{
                              data: Record<string, unknown> | null
                              error: { message: string; status?: number } | null
                            }>,
                          )
                          if (r.error)
                            notifications.show({ color: 'red', title: 'Not found', message: r.error.message })
                          else setEditing(r.data!)
                        }}
                      >
                        Edit
                      </Button>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {page.items.length === 0 && <Text p="md">Nothing matches.</Text>}
        </Table.ScrollContainer>
      )}
      <Pager
        filters={`${PATHS[kind]}${withChange(q, { after: undefined })}`}
        after={q.after}
        hasMore={page?.pagination.hasMore ?? false}
        nextCursor={page?.pagination.nextCursor}
        onPage={(after) => go({ after })}
      />
      <Modal opened={opened} onClose={close} title={`New ${SINGULAR[kind]}`} size="lg">
        <RecordForm
          kind={kind}
          fields={fields}
          onSaved={(saved) => {
            close()
            notifications.show({ color: 'green', title: 'Created', message: `The ${SINGULAR[kind]} is saved.` })
            if (kind === 'use_cases') navigate(`/use-cases/${saved.id}`)
            else go({})
          }}
        />
      </Modal>
      <Modal
        opened={editing !== undefined}
        onClose={() => setEditing(undefined)}
        title={`Edit ${editing?.name ?? ''}`}
        size="lg"
      >
        {editing && (
          <RecordForm
            kind={kind}
            record={editing}
            fields={fields}
            onSaved={() => {
              setEditing(undefined)
              notifications.show({ color: 'green', title: 'Saved', message: `The ${SINGULAR[kind]} is saved.` })
              go({ after: q.after })
            }}
          />
        )}
      </Modal>
    </Stack>
  )
}
