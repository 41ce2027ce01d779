import { type Static, Type } from 'typebox'
import { auditFilterFields } from '../audit-logs/audit-logs.schemas.js'

const AuditId = Type.String({
  pattern: '^al_[0-9a-z]{26}$',
  description: 'An audit record id: stream the records committed after it.',
})

export const EventStreamQuery = Type.Object(
  {
    after: Type.Optional(AuditId),
    action: auditFilterFields.action,
    resource_type: auditFilterFields.resource_type,
    use_case_id: auditFilterFields.use_case_id,
  },
  { additionalProperties: false },
)
export type EventStreamQuery = Static<typeof EventStreamQuery>

export const EventStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'Sent by a reconnecting client: resume after this record (wins over `after`).',
    }),
  ),
})
