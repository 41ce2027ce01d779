import { Alert, Anchor, Card, Loader, Stack, Table, Text, Title } from '@mantine/core'
import { useCallback, useEffect, useRef, useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api'
import { useMe } from '../me-context'
import { type Attachment, loadQuestionnaires, type Questionnaire, QuestionnaireForm } from '../questionnaire-form'

type Kind = 'model' | 'vendor'
const WORDS: Record<Kind, { list: string; path: string; one: string }> = {
  model: { list: 'All models', path: '/models', one: 'model' },
  vendor: { list: 'All vendors', path: '/vendors', one: 'vendor' },
}

interface State {
  record: {
    id: string
    name: string
    owner?: { name: string } | null
    summary?: string | null
    description?: string | null
  }
  questionnaires: { attachment: Attachment; definition: Questionnaire }[]
}

/** A model's or vendor's page: who owns it, and its questionnaires answered in place (details are edited in the list). */
export default function RecordPage({ kind, id }: { kind: Kind; id: string }) {
  const me = useMe()
  const words = WORDS[kind]
  const [state, setState] = useState<State | string | undefined>()
  const editing = useRef(new Set<string>())

  const reload = useCallback(async () => {
    const [record, questionnaires] = await Promise.all([
      kind === 'model' ? call(api.models.get(id)) : call(api.vendors.get(id)),
      loadQuestionnaires({ kind, id }),
    ])
    if (record.error)
      return setState(
        record.error.status === 404 ? `This ${words.one} does not exist, or you cannot see it.` : record.error.message,
      )
    setState({ record: record.data as State['record'], questionnaires })
  }, [kind, id, words.one])
  useEffect(() => {
    void reload()
  }, [reload])

  if (state === undefined) return <Loader aria-label={`Loading the ${words.one}`} />
  if (typeof state === 'string') return <Alert color="red">{state}</Alert>
  const { record } = state
  return (
    <Stack gap="lg">
      <Stack gap={4}>
        <Anchor component={Link} href={words.path} size="sm">
          ← {words.list}
        </Anchor>
        <Title order={1}>{record.name}</Title>
      </Stack>
      <Card withBorder component="section" aria-labelledby="overview-title">
        <Stack>
          <Title order={2} size="h3" id="overview-title">
            Overview
          </Title>
          <Text>{record.summary || record.description || 'No description yet.'}</Text>
          <Table variant="vertical" withTableBorder>
            <Table.Tbody>
              <Table.Tr>
                <Table.Th w={180}>Owner</Table.Th>
                <Table.Td>{record.owner?.name ?? 'Nobody'}</Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </Table>
        </Stack>
      </Card>
      <Card withBorder component="section" id="questionnaires" aria-labelledby="questionnaires-title">
        <Stack>
          <Title order={2} size="h3" id="questionnaires-title">
            Questionnaires
          </Title>
          {state.questionnaires.length === 0 && <Text>No questionnaire is attached.</Text>}
          {state.questionnaires.map((q) => (
            <QuestionnaireForm
              key={q.attachment.key}
              owner={{ kind, id }}
              attachment={q.attachment}
              definition={q.definition}
              canWrite={me.role !== 'read'}
              editing={editing.current}
              onSaved={reload}
            />
          ))}
        </Stack>
      </Card>
    </Stack>
  )
}
