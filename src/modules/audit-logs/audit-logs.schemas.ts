import { type Static, Type } from 'typebox'
import { PageOf, PageQuery, SortParam } from '../../shared/pagination.js'
import { Id, Nullable } from '../../shared/schemas.js'

export const SourceEnum = Type.Enum(['api', 'mcp', 'cli', 'system'])

export const AuditLog = Type.Object({
  id: Id('al'),
  created_at: Type.String({ format: 'date-time' }),
  action: Type.String({ examples: ['use_case.created'] }),
  resource_type: Type.String({ examples: ['use_case'] }),
  resource_id: Nullable(Type.String()),
  resource_name: Nullable(Type.String()),
  sub_object_type: Nullable(Type.String()),
  sub_object_id: Nullable(Type.String()),
  sub_object_name: Nullable(Type.String()),
  use_case_id: Nullable(Type.String()),
  actor: Type.Object(
    {
      type: Type.Enum(['user', 'api_key', 'system']),
      id: Nullable(Type.String({ description: 'usr_… for a person, key_… for an API key, null for the service.' })),
      name: Nullable(Type.String()),
    },
    { description: 'Who acted: a person (signed in, or through an assistant they authorized), an API key, or the service.' },
  ),
  source: SourceEnum,
  request_id: Nullable(Type.String()),
  changes: Nullable(
    Type.Record(Type.String(), Type.Array(Type.Unknown(), { minItems: 2, maxItems: 2 }), {
      description: '{field: [before, after]}',
    }),
  ),
  metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
})
export type AuditLog = Static<typeof AuditLog>

const StringOrList = (description: string) =>
  Type.Optional(
    Type.Union([Type.String({ maxLength: 100 }), Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })], {
      description,
    }),
  )

export const auditFilterFields = {
  action: StringOrList('One or more actions, e.g. use_case.created.'),
  resource_type: StringOrList('One or more resource types, e.g. use_case.'),
  resource_id: Type.Optional(Type.String({ maxLength: 200 })),
  use_case_id: Type.Optional(Type.String({ maxLength: 200 })),
  actor_id: Type.Optional(Type.String({ maxLength: 200 })),
  source: Type.Optional(SourceEnum),
  start_time: Type.Optional(Type.String({ format: 'date-time', description: 'Records at or after this time.' })),
  end_time: Type.Optional(Type.String({ format: 'date-time', description: 'Records before this time.' })),
  q: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the resource name.' }),
  ),
  sort: SortParam(['created_at']),
}

export const AuditLogListQuery = Type.Object({ ...PageQuery, ...auditFilterFields }, { additionalProperties: false })
export type AuditLogListQuery = Static<typeof AuditLogListQuery>

export const AuditLogPage = PageOf(AuditLog)

export const AuditLogQuery = Type.Object(
  { ...PageQuery, ...auditFilterFields },
  {
    additionalProperties: false,
    examples: [
      { action: ['use_case.created', 'use_case.updated'], start_time: '2026-11-01T00:00:00Z', page_limit: 100 },
    ],
  },
)
export type AuditLogQuery = Static<typeof AuditLogQuery>

const { sort: _sort, ...exportFilterFields } = auditFilterFields
export const AuditLogExportQuery = Type.Object(
  {
    format: Type.Optional(Type.Enum(['ndjson', 'csv'], { default: 'ndjson' })),
    ...exportFilterFields,
    sort: auditFilterFields.sort,
  },
  { additionalProperties: false },
)
export type AuditLogExportQuery = Static<typeof AuditLogExportQuery>

export const AuditVerification = Type.Object({
  ok: Type.Boolean({
    description:
      'True when every record matches its keyed hash and links to the one before (and the checkpoint, if given, matches).',
  }),
  checked: Type.Integer({ description: 'Records checked.' }),
  first_bad_id: Nullable(Type.String({ description: 'The first record that does not match, if any.' })),
  unkeyed: Type.Integer({
    description:
      'Records from before the chain was keyed (plain SHA-256), allowed only up to the sequence the tenant’s legacy proof (a MAC under the chain key) names; a later keyed record protects them.',
  }),
  reason: Type.Optional(
    Type.String({
      description: 'When `ok` is false: what failed (a record, the legacy proof, the head, the checkpoint).',
    }),
  ),
  checkpoint: Type.Optional(
    Type.Object({
      sequence: Type.Integer(),
      matched: Type.Boolean({
        description: 'The record at the checkpoint’s sequence still has the checkpoint’s head hash.',
      }),
    }),
  ),
})
export type AuditVerification = Static<typeof AuditVerification>

export const AuditVerifyQuery = Type.Object(
  {
    checkpoint: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'The `token` of a checkpoint kept earlier: proves nothing up to it has changed since.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type AuditVerifyQuery = Static<typeof AuditVerifyQuery>

export const AuditCheckpoint = Type.Object({
  tenant: Type.String(),
  sequence: Type.Integer({ description: 'The number of audit records in the tenant’s chain.' }),
  head: Type.String({ description: 'The hash of the newest record.' }),
  signed_at: Type.String({ format: 'date-time' }),
  signature: Type.String({
    description: 'Ed25519 over "aigov audit checkpoint v1\\n{tenant}\\n{sequence}\\n{head}\\n{signed_at}", base64url.',
  }),
  key_id: Type.String({ description: 'Which signing key (see /audit_logs/checkpoint/public_key).' }),
  token: Type.String({
    description: 'All of the above in one string: pass it to /audit_logs/verify?checkpoint= later.',
  }),
})
export type AuditCheckpoint = Static<typeof AuditCheckpoint>

export const AuditPublicKey = Type.Object({
  algorithm: Type.Literal('Ed25519'),
  key_id: Type.String(),
  public_key: Type.String({ description: 'SPKI PEM.' }),
})
export type AuditPublicKey = Static<typeof AuditPublicKey>
