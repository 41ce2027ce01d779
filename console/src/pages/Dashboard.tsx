import { snakify } from '@aigov/client'
import { BarChart, DonutChart } from '@mantine/charts'
import '@mantine/charts/styles.css'
import { Alert, Anchor, Card, Group, Loader, SimpleGrid, Stack, Text, Title } from '@mantine/core'
import { useEffect, useState } from 'react'
import { Link, useLocation } from 'wouter'
import { api, call } from '../api'
import { controlsHref, scopeChange } from '../controls-query'
import { COMPLETION_LABEL, CONTROL_STATUS_LABEL, label, RISK_LABEL, STEP_LABEL } from '../labels'

type Summary = NonNullable<Awaited<ReturnType<typeof api.governanceSummary.get>>['data']>

const RISK_COLOR: Record<string, string> = {
  high: 'red.6',
  medium: 'orange.5',
  low: 'yellow.5',
  none: 'gray.5',
  unset: 'gray.3',
}

/** The governance summary as charts; each links to the list it counts. */
export default function Dashboard() {
  const [summary, setSummary] = useState<Summary | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [, navigate] = useLocation()
  useEffect(() => {
    void call(api.governanceSummary.get()).then((r) => (r.error ? setError(r.error.message) : setSummary(r.data)))
  }, [])
  if (error) return <Alert color="red">{error}</Alert>
  if (!summary) return <Loader aria-label="Loading the dashboard" />
  const risk = Object.entries(summary.useCases.byRiskLevel).map(([level, count]) => ({
    name: level === 'unset' ? 'Not set' : (RISK_LABEL[level] ?? level),
    value: count,
    color: RISK_COLOR[level] ?? 'gray.5',
    level,
  }))
  const stages = summary.useCases.byWorkflowStage.map((s) => ({ stage: s.stageName ?? 'No stage', total: s.total }))
  // The client camelCases the counts' keys (inProgress): the labels and the list's filter take the API's status values.
  const byStatus = Object.entries(snakify(summary.controls.byStatus))
  const controls = byStatus.map(([status, count]) => ({ status: CONTROL_STATUS_LABEL[status] ?? status, count }))
  const q = summary.questionnaires
  return (
    <Stack>
      <Title order={1}>Dashboard</Title>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Title order={2} size="h4">
            Use cases by risk level
          </Title>
          <DonutChart
            data={risk.filter((r) => r.value > 0)}
            withLabels
            withTooltip
            chartLabel={`${summary.useCases.total}`}
          />
          <Group gap="xs" mt="sm">
            {risk
              .filter((r) => r.level !== 'unset')
              .map((r) => (
                <Anchor key={r.level} component={Link} href={`/use-cases?risk=${r.level}`} size="sm">
                  {r.name}: {r.value}
                </Anchor>
              ))}
          </Group>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4">
            Use cases by stage
          </Title>
          <BarChart
            h={200}
            data={stages}
            dataKey="stage"
            series={[{ name: 'total', color: 'indigo.6', label: 'Use cases' }]}
          />
          <Stack gap={2} mt="sm">
            {summary.useCases.byWorkflowStage.map((st) => (
              <Group key={st.stageId ?? 'none'} gap="xs">
                {st.stageId ? (
                  <Anchor component={Link} href={`/use-cases?stage=${st.stageId}`} size="sm" fw={600}>
                    {st.stageName}: {st.total}
                  </Anchor>
                ) : (
                  <Text size="sm">No stage: {st.total}</Text>
                )}
                {st.stageId &&
                  Object.entries(st.byStep)
                    .filter(([, n]) => n > 0)
                    .map(([step, n]) => (
                      <Anchor
                        key={step}
                        component={Link}
                        href={`/use-cases?stage=${st.stageId}&step=${step}`}
                        size="sm"
                      >
                        {label(STEP_LABEL, step)}: {n}
                      </Anchor>
                    ))}
              </Group>
            ))}
            <Anchor component={Link} href="/use-cases" size="sm">
              All use cases ({summary.useCases.total})
            </Anchor>
          </Stack>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4">
            Controls by status
          </Title>
          <BarChart
            h={200}
            data={controls}
            dataKey="status"
            series={[{ name: 'count', color: 'teal.6', label: 'Controls' }]}
          />
          <Group gap="xs" mt="sm">
            {byStatus.map(([status, count]) => (
              <Anchor key={status} component={Link} href={controlsHref({ status })} size="sm">
                {CONTROL_STATUS_LABEL[status] ?? status}: {count}
              </Anchor>
            ))}
          </Group>
          <Text size="sm">
            <Anchor component={Link} href={controlsHref(scopeChange('overdue'))} size="sm">
              {summary.controls.overdue} overdue
            </Anchor>
            , {summary.controls.missingEvidence} missing required evidence
          </Text>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4">
            Use cases by questionnaire answers
          </Title>
          <DonutChart
            data={[
              { name: COMPLETION_LABEL.complete, value: q.useCases.complete, color: 'green.6' },
              { name: COMPLETION_LABEL.incomplete, value: q.useCases.incomplete, color: 'orange.5' },
              { name: COMPLETION_LABEL.none, value: q.useCases.none, color: 'gray.4' },
            ].filter((d) => d.value > 0)}
            withTooltip
            chartLabel={`${summary.useCases.total}`}
          />
          <Group gap="xs" mt="sm">
            {(['complete', 'incomplete', 'none'] as const).map((c) => (
              <Anchor key={c} component={Link} href={`/use-cases?questionnaires=${c}`} size="sm">
                {COMPLETION_LABEL[c]}: {q.useCases[c]}
              </Anchor>
            ))}
          </Group>
          <Text size="sm">
            Of {q.attached} questionnaires attached, {q.complete} are complete and {q.incomplete} miss required answers.
          </Text>
        </Card>
      </SimpleGrid>
      <Card withBorder>
        <Title order={2} size="h4">
          Use cases with overdue controls
        </Title>
        {summary.overdueUseCasesTotal > 0 && (
          <Anchor component={Link} href="/use-cases?overdue=true" size="sm">
            All {summary.overdueUseCasesTotal} in the list
          </Anchor>
        )}
        {summary.overdueUseCases.length === 0 && <Text>None.</Text>}
        {summary.overdueUseCases.map((u) => (
          <Anchor
            key={u.id}
            component="button"
            type="button"
            onClick={() => navigate(`/use-cases/${u.id}#controls`)}
            display="block"
          >
            {u.name}: {u.overdueControls} overdue since {u.earliestDueDate}
          </Anchor>
        ))}
      </Card>
    </Stack>
  )
}
