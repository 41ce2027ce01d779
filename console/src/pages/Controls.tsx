import {
  Alert,
  Anchor,
  Badge,
  Group,
  Input,
  Loader,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core'
import { useEffect, useId, useState } from 'react'
import { Link, useLocation, useSearch } from 'wouter'
import { api, call, problemOf } from '../api'
import {
  type ControlScope,
  type ControlsQuery,
  controlsApiQuery,
  controlsWithChange,
  isOverdue,
  parseControlsQuery,
  requiredEvidence,
  scopeChange,
  scopeOf,
} from '../controls-query'
import { useOwnerChoices } from '../custom-fields'
import { CONTROL_STATUS_LABEL, label, options } from '../labels'
import { Pager } from '../Pager'

type Page = NonNullable<Awaited<ReturnType<typeof api.useCaseControls.list>>['data']>

/** Every use case's controls in one table: filters and page kept in the address, as the registry keeps them. */
export default function Controls() {
  const search = useSearch()
  const [, navigate] = useLocation()
  const q = parseControlsQuery(search)
  const [page, setPage] = useState<Page | undefined>()
  const [error, setError] = useState<string | undefined>()
  const owners = useOwnerChoices()
  const scopeLabel = useId()
  const go = (change: Partial<ControlsQuery>) => navigate(`/controls${controlsWithChange(q, change)}`)
  const today = new Date().toISOString().slice(0, 10)

  // biome-ignore lint/correctness/useExhaustiveDependencies: the address is the state
  useEffect(() => {
    let live = true
    setPage(undefined)
    void call(api.useCaseControls.list(controlsApiQuery(q))).then((r) => {
      if (!live) return
      if (r.error) setError(problemOf(r.error).message)
      else {
        setError(undefined)
        setPage(r.data)
      }
    })
    return () => {
      live = false
    }
  }, [search])

  return (
    <Stack>
      <Title order={1}>Controls</Title>
      <Text c="dimmed">The controls of every use case, oldest first.</Text>
      <Group align="flex-end" wrap="wrap">
        <Select
          label="Status"
          clearable
          data={options(CONTROL_STATUS_LABEL)}
          value={q.status ?? null}
          onChange={(v) => go({ status: v ?? undefined })}
          w={180}
        />
        <Stack gap={2}>
          <Input.Label id={scopeLabel} labelElement="div">
            Show
          </Input.Label>
          <SegmentedControl
            aria-labelledby={scopeLabel}
            data={[
              { value: 'all', label: 'All' },
              { value: 'open', label: 'Open only' },
              { value: 'overdue', label: 'Overdue only' },
            ]}
            value={scopeOf(q)}
            onChange={(v) => go(scopeChange(v as ControlScope))}
          />
        </Stack>
        <Select
          label="Assigned to"
          clearable
          searchable
          data={owners}
          value={q.assignee ?? null}
          onChange={(v) => go({ assignee: v ?? undefined })}
          w={220}
        />
      </Group>
      {error && <Alert color="red">{error}</Alert>}
      {!page && !error && <Loader aria-label="Loading" />}
      {page && (
        <Table.ScrollContainer minWidth={720}>
          <Table striped highlightOnHover data-testid="controls-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Control</Table.Th>
                <Table.Th>Use case</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Assigned to</Table.Th>
                <Table.Th>Due</Table.Th>
                <Table.Th>Required evidence</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {page.items.map((c) => (
                <Table.Tr key={c.id}>
                  <Table.Td>
                    <Text size="sm" fw={500}>
                      {c.name}
                    </Text>
                    <Text size="xs" c="dimmed">
                      {c.controlKey} v{c.controlVersion}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Anchor component={Link} href={`/use-cases/${c.useCaseId}#controls`}>
                      {c.useCaseName}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{label(CONTROL_STATUS_LABEL, c.status)}</Table.Td>
                  <Table.Td>{c.assignee?.name ?? 'Nobody'}</Table.Td>
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      {c.dueDate ?? '—'}
                      {isOverdue(c, today) && <Badge color="red">Overdue</Badge>}
                    </Group>
                  </Table.Td>
                  <Table.Td>{requiredEvidence(c.evidenceRequirements)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {page.items.length === 0 && <Text p="md">Nothing matches.</Text>}
        </Table.ScrollContainer>
      )}
      <Pager
        filters={controlsWithChange(q, { after: undefined })}
        after={q.after}
        hasMore={page?.pagination.hasMore ?? false}
        nextCursor={page?.pagination.nextCursor}
        onPage={(after) => go({ after })}
      />
    </Stack>
  )
}
