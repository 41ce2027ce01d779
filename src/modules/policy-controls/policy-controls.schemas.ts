import { type Static, Type } from 'typebox'
import { PageOf, PageQuery, SortParam } from '../../shared/pagination.js'
import { Description, Id, Key, Name, Nullable, Timestamps } from '../../shared/schemas.js'

export const VersionStatus = Type.Enum(['draft', 'published'])

export const EvidenceRequirement = Type.Object(
  {
    type: Type.Enum(['text', 'file', 'link', 'metric']),
    description: Type.String({ minLength: 1, maxLength: 2000 }),
    required: Type.Boolean(),
  },
  { additionalProperties: false },
)
export type EvidenceRequirement = Static<typeof EvidenceRequirement>

const EvidenceRequirementInput = Type.Object(
  {
    type: Type.Enum(['text', 'file', 'link', 'metric']),
    description: Type.String({ minLength: 1, maxLength: 2000 }),
    required: Type.Optional(Type.Boolean({ default: true, description: 'Default true.' })),
  },
  { additionalProperties: false },
)

const RiskTypeIds = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: 50,
  uniqueItems: true,
  description: 'rt_ ids of risk types in this tenant.',
})

// --- bases ---

export const PolicyControlBase = Type.Object({
  id: Id('pcb'),
  key: Key,
  name: Name,
  archived: Type.Boolean(),
  deprecated: Type.Boolean(),
  latest_version: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The highest published version, or null before the first publish.',
  }),
  ...Timestamps,
})
export type PolicyControlBase = Static<typeof PolicyControlBase>

export const PolicyControlBaseCreate = Type.Object(
  { key: Key, name: Name },
  { additionalProperties: false, examples: [{ key: 'HUMAN-OVERSIGHT', name: 'Human oversight' }] },
)
export type PolicyControlBaseCreate = Static<typeof PolicyControlBaseCreate>

export const PolicyControlBaseUpdate = Type.Object(
  { name: Type.Optional(Name), archived: Type.Optional(Type.Boolean()), deprecated: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, examples: [{ deprecated: true }] },
)
export type PolicyControlBaseUpdate = Static<typeof PolicyControlBaseUpdate>

export const PolicyControlBaseListQuery = Type.Object(
  {
    ...PageQuery,
    sort: SortParam(['key', 'name', 'created_at']),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' }),
    ),
    key: Type.Optional(Key),
    archived: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type PolicyControlBaseListQuery = Static<typeof PolicyControlBaseListQuery>

export const PolicyControlBasePage = PageOf(PolicyControlBase)

// --- versions ---

export const PolicyControlVersion = Type.Object({
  id: Id('pcv'),
  base_id: Id('pcb'),
  key: Key,
  version: Type.Integer({ minimum: 1 }),
  status: VersionStatus,
  name: Name,
  description: Type.Union([Type.String(), Type.Null()]),
  evidence_requirements: Type.Array(EvidenceRequirement),
  risk_type_ids: Type.Array(Type.String()),
  published_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  ...Timestamps,
})
export type PolicyControlVersion = Static<typeof PolicyControlVersion>

const versionEditable = {
  name: Type.Optional(Name),
  description: Type.Optional(Description({ examples: ['A person with authority can stop or override the system.'] })),
  evidence_requirements: Type.Optional(Nullable(Type.Array(EvidenceRequirementInput, { maxItems: 50 }))),
  risk_type_ids: Type.Optional(Nullable(RiskTypeIds)),
}

export const PolicyControlVersionCreate = Type.Object(
  {
    base_id: Type.Optional(Type.String({ maxLength: 64, description: 'The base; give this or `key`.' })),
    key: Type.Optional(Key),
    ...versionEditable,
  },
  {
    additionalProperties: false,
    description: 'Creates the next version (1, 2, …) of a base as a draft. `name` defaults to the base name.',
    examples: [
      {
        key: 'HUMAN-OVERSIGHT',
        description: 'Name who can stop the system.',
        evidence_requirements: [{ type: 'file', description: 'Oversight procedure', required: true }],
      },
    ],
  },
)
export type PolicyControlVersionCreate = Static<typeof PolicyControlVersionCreate>

export const PolicyControlVersionUpdate = Type.Object(versionEditable, {
  additionalProperties: false,
  description: 'Drafts only; a published version answers 409.',
  examples: [{ description: 'Changed wording.' }],
})
export type PolicyControlVersionUpdate = Static<typeof PolicyControlVersionUpdate>

export const PolicyControlVersionListQuery = Type.Object(
  {
    ...PageQuery,
    base_id: Type.Optional(Type.String({ maxLength: 64 })),
    key: Type.Optional(Key),
    status: Type.Optional(VersionStatus),
  },
  { additionalProperties: false },
)
export type PolicyControlVersionListQuery = Static<typeof PolicyControlVersionListQuery>

export const PolicyControlVersionPage = PageOf(PolicyControlVersion)

// --- published controls (read-only) ---

export const PolicyControl = Type.Object(
  {
    id: Id('pcb'),
    version_id: Id('pcv'),
    key: Key,
    version: Type.Integer({ minimum: 1 }),
    name: Name,
    description: Type.Union([Type.String(), Type.Null()]),
    evidence_requirements: Type.Array(EvidenceRequirement),
    risk_type_ids: Type.Array(Type.String()),
    deprecated: Type.Boolean(),
    published_at: Type.String({ format: 'date-time' }),
    ...Timestamps,
  },
  {
    description:
      'The latest published version of a non-archived control base, flattened; `id` is the base id, stable across versions.',
  },
)
export type PolicyControl = Static<typeof PolicyControl>

export const PolicyControlListQuery = Type.Object(
  {
    ...PageQuery,
    sort: SortParam(['key', 'name']),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' }),
    ),
    risk_type_id: Type.Optional(Type.String({ maxLength: 64, description: 'Controls addressing this risk type.' })),
    key: Type.Optional(Key),
  },
  { additionalProperties: false },
)
export type PolicyControlListQuery = Static<typeof PolicyControlListQuery>

export const PolicyControlPage = PageOf(PolicyControl)
