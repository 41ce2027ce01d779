import { type Static, Type } from 'typebox'

/**
 * The records of a bundle, one NDJSON line each, referring to each other and to the configuration by natural keys:
 * records by name, people by email, teams by name, custom fields by name, questionnaires and packs by KEY+version,
 * evidence by its key (its content's sha256 or its URL, and its title).
 */

const Str = (maxLength: number) => Type.String({ maxLength })
const Maybe = (maxLength: number) => Type.Union([Str(maxLength), Type.Null()])
const Scalar = Type.Union([Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean()])
const Value = Type.Union([Scalar, Type.Array(Scalar, { maxItems: 100 })])

export const RecordOwner = Type.Union(
  [
    Type.Object({ email: Str(320) }, { additionalProperties: false }),
    Type.Object({ team: Str(200) }, { additionalProperties: false }),
    Type.Null(),
  ],
  { description: 'A user by email or a team by name.' },
)

const CustomFields = Type.Record(Type.String({ maxLength: 200 }), Value, {
  description: 'Values by custom field name.',
  maxProperties: 100,
})
const Names = Type.Array(Str(200), { maxItems: 1000, uniqueItems: true })
const EvidenceKeys = Type.Array(Str(2600), { maxItems: 50 })

const governed = { owner: RecordOwner, custom_fields: CustomFields }

export const VendorRecord = Type.Object(
  {
    name: Str(200),
    description: Maybe(20_000),
    website: Maybe(500),
    status: Str(50),
    ...governed,
  },
  { additionalProperties: false },
)

export const ModelRecord = Type.Object(
  {
    name: Str(200),
    summary: Maybe(20_000),
    source: Maybe(200),
    status: Str(50),
    provider: Maybe(200),
    model_type: Maybe(100),
    version: Maybe(100),
    ...governed,
    vendors: Names,
  },
  { additionalProperties: false },
)

export const EvidenceRecord = Type.Object(
  {
    key: Str(2600),
    kind: Type.Enum(['file', 'link']),
    title: Maybe(500),
    url: Maybe(2048),
    file_name: Maybe(500),
    content_type: Maybe(200),
    size: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    sha256: Type.Union([Type.String({ pattern: '^[0-9a-f]{64}$' }), Type.Null()]),
  },
  { additionalProperties: false },
)

const Answer = Type.Object(
  {
    question_id: Str(100),
    section_id: Str(100),
    value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String())]),
    evidence: EvidenceKeys,
  },
  { additionalProperties: false },
)

const AttachedQuestionnaire = Type.Object(
  { questionnaire: Str(120), answers: Type.Array(Answer, { maxItems: 1000 }) },
  { additionalProperties: false },
)

const ControlStatus = Type.Object(
  {
    control: Str(120),
    status: Type.Enum(['pending', 'in_progress', 'implemented', 'not_applicable']),
    notes: Maybe(10_000),
    due_date: Maybe(40),
    evidence: Type.Array(
      Type.Object(
        { key: Str(2600), requirement: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]) },
        { additionalProperties: false },
      ),
      { maxItems: 200 },
    ),
  },
  { additionalProperties: false },
)

const AppliedPack = Type.Object({ pack: Str(120), due_date: Maybe(40) }, { additionalProperties: false })

export const UseCaseRecord = Type.Object(
  {
    name: Str(200),
    description: Maybe(20_000),
    ai_type: Maybe(100),
    system_type: Maybe(100),
    risk_category_level: Type.Union([Type.Enum(['high', 'medium', 'low', 'none']), Type.Null()]),
    regions: Type.Array(Str(100), { maxItems: 50 }),
    industries: Type.Array(Str(100), { maxItems: 50 }),
    source: Maybe(200),
    ...governed,
    models: Names,
    vendors: Names,
    questionnaires: Type.Array(AttachedQuestionnaire, { maxItems: 50 }),
    policy_packs: Type.Array(AppliedPack, { maxItems: 50 }),
    controls: Type.Array(ControlStatus, {
      maxItems: 1000,
      description: 'The controls the packs brought, by KEY+version.',
    }),
  },
  { additionalProperties: false },
)

export type VendorRecord = Static<typeof VendorRecord>
export type ModelRecord = Static<typeof ModelRecord>
export type EvidenceRecord = Static<typeof EvidenceRecord>
export type UseCaseRecord = Static<typeof UseCaseRecord>
export type RecordOwner = Static<typeof RecordOwner>

/** The kinds of records, in the order they are written and applied (what is referenced first). */
export const RECORD_KINDS = ['vendors', 'models', 'evidence', 'use_cases'] as const
export type RecordKind = (typeof RECORD_KINDS)[number]

export const RECORD_SCHEMAS: Record<RecordKind, object> = {
  vendors: VendorRecord,
  models: ModelRecord,
  evidence: EvidenceRecord,
  use_cases: UseCaseRecord,
}

/** One record of a plan: its kind and natural key, and what applying the bundle does to it. */
export const RecordChange = Type.Object({
  kind: Type.Enum([...RECORD_KINDS]),
  key: Type.String(),
  action: Type.Enum(['create', 'update']),
  fields: Type.Optional(Type.Array(Type.String(), { description: 'The top-level fields an update changes.' })),
})
export type RecordChange = Static<typeof RecordChange>

export const RecordsPlan = Type.Object(
  {
    summary: Type.Object({
      create: Type.Integer(),
      update: Type.Integer(),
      unchanged: Type.Integer(),
      files: Type.Integer({ description: 'Evidence files in the bundle.' }),
    }),
    changes: Type.Array(RecordChange, { description: 'The records created or updated (unchanged ones are counted).' }),
  },
  { description: 'What applying the bundle does to its records; present when the body was a bundle.' },
)
export type RecordsPlan = Static<typeof RecordsPlan>
