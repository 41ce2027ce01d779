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
  actor: Type.Object({
    type: Type.Enum(['api_key', 'system']),
    id: Nullable(Type.String()),
    name: Nullable(Type.String()),
  }),
  source: SourceEnum,
  request_id: Nullable(Type.String()),
  changes: Nullable(Type.Record(Type.String(), Type.Array(Type.Unknown(), { minItems: 2, maxItems: 2 }), { description: '{field: [before, after]}' })),
  metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
})
export type AuditLog = Static<typeof AuditLog>

const StringOrList = (description: string) =>
  Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })], { description }))

export const auditFilterFields = {
  action: StringOrList('One or more actions, e.g. use_case.created.'),
  resource_type: StringOrList('One or more resource types, e.g. use_case.'),
  resource_id: Type.Optional(Type.String({ maxLength: 200 })),
  use_case_id: Type.Optional(Type.String({ maxLength: 200 })),
  actor_id: Type.Optional(Type.String({ maxLength: 200 })),
  source: Type.Optional(SourceEnum),
  start_time: Type.Optional(Type.String({ format: 'date-time', description: 'Records at or after this time.' })),
  end_time: Type.Optional(Type.String({ format: 'date-time', description: 'Records before this time.' })),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the resource name.' })),
  sort: SortParam(['created_at']),
}

export const AuditLogListQuery = Type.Object({ ...PageQuery, ...auditFilterFields }, { additionalProperties: false })
export type AuditLogListQuery = Static<typeof AuditLogListQuery>

export const AuditLogPage = PageOf(AuditLog)
