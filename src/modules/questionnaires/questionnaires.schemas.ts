import { type Static, Type } from 'typebox'
import { PageOf, PageQuery, SortParam } from '../../shared/pagination.js'
import { Description, Id, Key, Name, Nullable, Text, Timestamps } from '../../shared/schemas.js'

export const MAX_QUESTIONS = 200

export const QuestionnaireTarget = Type.Enum(['use_case', 'model', 'vendor'])
export const EvidenceType = Type.Enum(['text', 'number', 'boolean', 'select', 'file'])
const LocalId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Unique within the questionnaire version.' })

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
    id: LocalId,
    question: Type.String({ minLength: 1, maxLength: 2000 }),
    evidence_type: EvidenceType,
    multiple: Type.Optional(Type.Boolean({ default: false, description: 'More than one answer (select) or file.' })),
    select_options: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { maxItems: 100, uniqueItems: true, description: 'Required for select questions, and only for them.' }))),
    required: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
)

const SectionInput = Type.Object(
  {
    id: LocalId,
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
    description: `Publishes the next version (previous + 1) of the questionnaire with this key. Section ids and question ids are unique within the version; select questions need select_options; at most ${MAX_QUESTIONS} questions. Every version of a key has the same target.`,
    examples: [{
      key: 'VENDOR-DD', name: 'Vendor due diligence', target: 'vendor',
      sections: [{ id: 'security', title: 'Security', questions: [
        { id: 'soc2', question: 'Do you hold a current SOC 2 Type II report?', evidence_type: 'file', required: true },
        { id: 'hosting', question: 'Where is customer data hosted?', evidence_type: 'select', select_options: ['EU', 'US', 'Other'], multiple: true },
      ] }],
    }],
  },
)
export type QuestionnaireCreate = Static<typeof QuestionnaireCreate>

export const QuestionnaireListQuery = Type.Object(
  {
    ...PageQuery,
    sort: SortParam(['key', 'name', 'created_at']),
    all_versions: Type.Optional(Type.Boolean({ default: false, description: 'Every version, not only the latest of each key.' })),
    key: Type.Optional(Key),
    target: Type.Optional(QuestionnaireTarget),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' })),
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
  { key: Key, version: Type.Optional(Nullable(Type.Integer({ minimum: 1, description: 'The latest version when absent.' }))) },
  { additionalProperties: false, description: 'The questionnaire must target this kind of record (422 otherwise). One version per key; detach first to change it (409).', examples: [{ key: 'AI-INTAKE' }] },
)
export type AttachQuestionnaire = Static<typeof AttachQuestionnaire>

export const AttachedQuestionnairePage = PageOf(AttachedQuestionnaire)
export const OwnerPageQuery = Type.Object(PageQuery, { additionalProperties: false })
export const OwnerKeyParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'The uc_… or mdl_… id.' }), key: Type.String({ maxLength: 100, description: 'The questionnaire key.' }) })
