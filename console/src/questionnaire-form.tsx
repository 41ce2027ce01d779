import { Card, Group, MultiSelect, NumberInput, Progress, Select, Stack, Text, Textarea, Title } from '@mantine/core'
import { Dropzone } from '@mantine/dropzone'
import { useState } from 'react'
import { api, call, problemOf } from './api'
import { formatBytes, tooLarge } from './bytes'
import { questionAnchor } from './gate'
import { uploadEvidence, useUploadLimit } from './upload'

// A questionnaire answered in place (by question type, saved as the person goes) and the file drop: shared by the
// use case page and the model and vendor pages.

type Api = typeof api
type Awaited2<T> = T extends Promise<infer U> ? U : never
type DataOf<F extends (...a: never[]) => Promise<unknown>> = NonNullable<
  Awaited2<ReturnType<F>> extends { data: infer D } ? D : never
>
export type Attachment = DataOf<Api['useCases']['questionnaires']['get']>
export type Questionnaire = DataOf<Api['questionnaires']['get']>
export type QuestionnaireOwner = { kind: 'use_case' | 'model' | 'vendor'; id: string }

const ANSWER = {
  use_case: api.useCases.questionnaires,
  model: api.models.questionnaires,
  vendor: api.vendors.questionnaires,
}

/** The attached questionnaires of a record with their answers and definitions (for the forms below). */
export async function loadQuestionnaires(
  owner: QuestionnaireOwner,
): Promise<{ attachment: Attachment; definition: Questionnaire }[]> {
  const on = ANSWER[owner.kind]
  const qs = await call(on.list(owner.id, { pageLimit: 20 }))
  const got = await Promise.all(
    (qs.data?.items ?? []).map(async (q) => {
      const [attachment, definition] = await Promise.all([
        call(on.get(owner.id, q.key)),
        call(api.questionnaires.get(q.key, { version: q.version })),
      ])
      return attachment.data && definition.data
        ? { attachment: attachment.data as Attachment, definition: definition.data }
        : null
    }),
  )
  return got.filter((q) => q !== null)
}

type AnswerValue = string | number | boolean | string[] | null

/** One array for every render: a new one each time makes the open list lose the option the keyboard is on. */
const YES_NO = [
  { value: 'true', label: 'Yes' },
  { value: 'false', label: 'No' },
]

export function QuestionnaireForm(props: {
  owner: QuestionnaireOwner
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
      ANSWER[props.owner.kind].answer(props.owner.id, attachment.key, {
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
                      data={YES_NO}
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
export function Upload({ label: text, onUploaded }: { label: string; onUploaded: (evidenceId: string) => void }) {
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
