import { type Static, Type } from 'typebox'
import { PageOf, PageQuery, SortParam } from '../../shared/pagination.js'
import { Description, Id, Key, Name, Nullable, Text, Timestamps } from '../../shared/schemas.js'

export const MAX_QUESTIONS = 200

export const QuestionnaireTarget = Type.Enum(['use_case', 'model', 'vendor'])
export const EvidenceType = Type.Enum(['text', 'number', 'boolean', 'select', 'file'])
const LocalId = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
  description: 'Unique within the questionnaire version.',
})
const AssignedId = (what: string) =>
  Type.Optional(
    Nullable(LocalId, {
      description: `Unique within the questionnaire version. When absent the service assigns one from the ${what} (lower case, words joined by \`-\`, then \`-2\`, \`-3\` for repeats) and returns it: copy it into the next version to keep answers addressable.`,
    }),
  )

/** "KEY+version", as use cases list their questionnaires; keys cannot contain "+", so the form is unambiguous. */
export const QUESTIONNAIRE_REF_MAX = 110
export const QuestionnaireRefParam = (description: string) =>
  Type.String({ maxLength: QUESTIONNAIRE_REF_MAX, description })

export const Question = Type.Object({
  id: LocalId,
  question: Type.String({ minLength: 1, maxLength: 2000 }),
  evidence_type: EvidenceType,
  multiple: Type.Boolean(),
  select_options: Type.Array(Type.String()),
  required: Type.Boolean(),
})
export type Question = Static<typeof Question>

export const Section = Type.Object({
  id: LocalId,
  title: Type.String({ minLength: 1, maxLength: 300 }),
  description: Type.Union([Type.String(), Type.Null()]),
  questions: Type.Array(Question),
})
export type Section = Static<typeof Section>

const QuestionInput = Type.Object(
  {
    id: AssignedId('question text'),
    question: Type.String({ minLength: 1, maxLength: 2000 }),
    evidence_type: EvidenceType,
    multiple: Type.Optional(Type.Boolean({ default: false, description: 'More than one answer (select) or file.' })),
    select_options: Type.Optional(
      Nullable(
        Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
          maxItems: 100,
          uniqueItems: true,
          description: 'Required for select questions, and only for them.',
        }),
      ),
    ),
    required: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
)

const SectionInput = Type.Object(
  {
    id: AssignedId('section title'),
    title: Type.String({ minLength: 1, maxLength: 300 }),
    description: Type.Optional(Nullable(Text(5000))),
    questions: Type.Array(QuestionInput, { minItems: 1, maxItems: MAX_QUESTIONS }),
  },
  { additionalProperties: false },
)

export const Questionnaire = Type.Object({
  id: Id('q'),
  key: Key,
  version: Type.Integer({ minimum: 1 }),
  questionnaire_id: Type.String({ description: 'KEY+version, as use cases list it.', examples: ['AI-INTAKE+1'] }),
  latest: Type.Boolean({ description: 'True on the newest version of this key.' }),
  name: Name,
  description: Type.Union([Type.String(), Type.Null()]),
  target: QuestionnaireTarget,
  sections: Type.Array(Section),
  ...Timestamps,
})
export type Questionnaire = Static<typeof Questionnaire>

export const QuestionnaireCreate = Type.Object(
  {
    key: Key,
    name: Name,
    description: Type.Optional(Description()),
    target: QuestionnaireTarget,
    sections: Type.Array(SectionInput, { minItems: 1, maxItems: 50 }),
  },
  {
    additionalProperties: false,
    description: `Publishes the next version (previous + 1) of the questionnaire with this key. Section ids and question ids are unique within the version (the service assigns the ones left out, and returns them); select questions need select_options; at most ${MAX_QUESTIONS} questions. Every version of a key has the same target.`,
    examples: [
      {
        key: 'VENDOR-DD',
        name: 'Vendor due diligence',
        target: 'vendor',
        sections: [
          {
            id: 'security',
            title: 'Security',
            questions: [
              {
                id: 'soc2',
                question: 'Do you hold a current SOC 2 Type II report?',
                evidence_type: 'file',
                required: true,
              },
              {
                id: 'hosting',
                question: 'Where is customer data hosted?',
                evidence_type: 'select',
                select_options: ['EU', 'US', 'Other'],
                multiple: true,
              },
            ],
          },
        ],
      },
    ],
  },
)
export type QuestionnaireCreate = Static<typeof QuestionnaireCreate>

export const QuestionnaireListQuery = Type.Object(
  {
    ...PageQuery,
    sort: SortParam(['key', 'name', 'created_at']),
    all_versions: Type.Optional(
      Type.Boolean({ default: false, description: 'Every version, not only the latest of each key.' }),
    ),
    key: Type.Optional(Key),
    target: Type.Optional(QuestionnaireTarget),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' }),
    ),
  },
  { additionalProperties: false },
)
export type QuestionnaireListQuery = Static<typeof QuestionnaireListQuery>

export const QuestionnairePage = PageOf(Questionnaire)

export const AttachedQuestionnaire = Type.Object({
  id: Id('q'),
  key: Key,
  version: Type.Integer({ minimum: 1 }),
  questionnaire_id: Type.String({ examples: ['AI-INTAKE+1'] }),
  name: Name,
  target: QuestionnaireTarget,
  attached_at: Type.String({ format: 'date-time' }),
})
export type AttachedQuestionnaire = Static<typeof AttachedQuestionnaire>

export const AttachQuestionnaire = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: QUESTIONNAIRE_REF_MAX,
      pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*(\\+[1-9][0-9]{0,8})?$',
      description:
        'The questionnaire key, or "KEY+version" (as `questionnaire_ids` lists it), which names the version as `version` does.',
      examples: ['AI-INTAKE', 'AI-INTAKE+1'],
    }),
    version: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, description: 'The latest version when absent (and `key` names none).' })),
    ),
  },
  {
    additionalProperties: false,
    description:
      'The questionnaire must target this kind of record (422 otherwise). One version per key; detach first to change it (409).',
    examples: [{ key: 'AI-INTAKE' }, { key: 'AI-INTAKE+1' }],
  },
)
export type AttachQuestionnaire = Static<typeof AttachQuestionnaire>

export const OwnerPageQuery = Type.Object(PageQuery, { additionalProperties: false })
export const OwnerKeyParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'The uc_…, mdl_… or vnd_… id.' }),
  key: QuestionnaireRefParam('The questionnaire key, or "KEY+version" (404 unless that version is the one attached).'),
})
export const QuestionnaireParams = Type.Object({
  key: QuestionnaireRefParam(
    'The questionnaire key (its latest version, or `?version=`), "KEY+version", or its q_ id.',
  ),
})

const AnswerValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String())], {
  description:
    'text: a string; number; boolean; select: one of select_options, or a list of them when multiple; file: evidence ids.',
})

export const Answer = Type.Object({
  question_id: Type.String(),
  section_id: Type.String(),
  value: AnswerValue,
  evidence_ids: Type.Array(Type.String(), {
    description: 'Evidence given with the answer (for a file question, its value).',
  }),
  answered_by: Nullable(
    Type.String({
      description: 'Who gave the answer: the user id (usr_…) of a person, or the API key id (key_…) of an integration.',
    }),
  ),
  answered_at: Type.String({ format: 'date-time' }),
})
export type Answer = Static<typeof Answer>

export const AnswerProgress = Type.Object({
  questions: Type.Integer({ minimum: 0 }),
  answered: Type.Integer({ minimum: 0 }),
  required: Type.Integer({ minimum: 0 }),
  required_answered: Type.Integer({ minimum: 0 }),
  complete: Type.Boolean({ description: 'Every required question is answered.' }),
})
export type AnswerProgress = Static<typeof AnswerProgress>

/** A list item carries its progress, so a reader of many records (the console's inbox) needs no read per attachment. */
export const AttachedQuestionnairePage = PageOf(
  Type.Object({ ...AttachedQuestionnaire.properties, progress: AnswerProgress }),
)

export const AnsweredQuestionnaire = Type.Object({
  ...AttachedQuestionnaire.properties,
  answers: Type.Array(Answer, { description: 'In questionnaire order; unanswered questions are absent.' }),
  progress: AnswerProgress,
})
export type AnsweredQuestionnaire = Static<typeof AnsweredQuestionnaire>

export const AnswerInput = Type.Object(
  {
    question_id: Type.String({ minLength: 1, maxLength: 100 }),
    value: Type.Union([AnswerValue, Type.Null()], { description: 'null clears the answer.' }),
    evidence_ids: Type.Optional(
      Nullable(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50, uniqueItems: true })),
    ),
  },
  { additionalProperties: false },
)

export const AnswersUpdate = Type.Object(
  { answers: Type.Array(AnswerInput, { minItems: 1, maxItems: MAX_QUESTIONS }) },
  {
    additionalProperties: false,
    description:
      "Sets the listed answers and leaves the others as they are; `value: null` clears one. Each value must fit its question (422 naming `answers/<i>/value`); evidence ids must be the tenant's.",
    examples: [
      {
        answers: [
          { question_id: 'purpose', value: 'Ranks loan applications for manual review.' },
          { question_id: 'autonomy', value: 'human-in-the-loop' },
        ],
      },
    ],
  },
)
export type AnswersUpdate = Static<typeof AnswersUpdate>
