import { type Static, Type } from 'typebox'
import { AuditLog } from '../audit-logs/audit-logs.schemas.js'
import { PageOf, PageQuery } from '../../shared/pagination.js'
import { HttpUrl, Id, Nullable, Timestamps } from '../../shared/schemas.js'

/** `*`, `family.*`, or one exact action. */
const EventPattern = Type.String({
  pattern: '^(\\*|[a-z0-9_]+\\.\\*|[a-z0-9_]+(\\.[a-z0-9_]+)+)$',
  maxLength: 200,
  description: '`*` for every event, `use_case.*` for a family, or one action such as `use_case.workflow_advanced`.',
})

const Url = HttpUrl(2048, {
  description: 'An https:// (or http://) address that receives POSTed events.',
  examples: ['https://hooks.example.com/aigov'],
})

export const WebhookEndpoint = Type.Object({
  id: Id('whep'),
  url: Url,
  description: Nullable(Type.String()),
  events: Type.Array(EventPattern),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(
    Type.String({ description: 'Why the service disabled it (after failing for 24 h), if it did.' }),
  ),
  failing_since: Nullable(
    Type.String({ format: 'date-time', description: 'Deliveries have been failing since then; null while healthy.' }),
  ),
  ...Timestamps,
})
export type WebhookEndpoint = Static<typeof WebhookEndpoint>

export const WebhookEndpointWithSecret = Type.Object({
  ...WebhookEndpoint.properties,
  secret: Type.Optional(
    Type.String({
      description:
        'The signing secret (Standard Webhooks). Shown once, never again: absent when the response is an Idempotency-Key replay.',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
  ),
  secret_shown: Type.Boolean({
    description: 'true when `secret` holds the secret; false on an Idempotency-Key replay, which never carries it.',
  }),
})
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>

export const WebhookEndpointCreate = Type.Object(
  {
    url: Url,
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    events: Type.Array(EventPattern, { minItems: 1, maxItems: 100, uniqueItems: true }),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  {
    additionalProperties: false,
    examples: [{ url: 'https://hooks.example.com/aigov', description: 'Jira sync', events: ['use_case.*'] }],
  },
)
export type WebhookEndpointCreate = Static<typeof WebhookEndpointCreate>

export const WebhookEndpointUpdate = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    events: Type.Optional(Type.Array(EventPattern, { minItems: 1, maxItems: 100, uniqueItems: true })),
    enabled: Type.Optional(
      Type.Boolean({ description: 'Re-enabling an endpoint the service disabled clears its failure record.' }),
    ),
  },
  { additionalProperties: false },
)
export type WebhookEndpointUpdate = Static<typeof WebhookEndpointUpdate>

export const WebhookEndpointListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false })
export type WebhookEndpointListQuery = Static<typeof WebhookEndpointListQuery>

export const DeliveryStatus = Type.Enum(['pending', 'succeeded', 'failed'], {
  description: 'pending: waiting for its next attempt; failed: gave up after 24 h.',
})

export const WebhookDelivery = Type.Object({
  id: Id('whd'),
  endpoint_id: Id('whep'),
  event_id: Type.String({ examples: ['evt_al_01jd3k8m9v4q2w6e8r0t2y4u6i'] }),
  event_type: Type.String({ examples: ['use_case.created'] }),
  status: DeliveryStatus,
  attempts: Type.Integer(),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  last_attempt_at: Nullable(Type.String({ format: 'date-time' })),
  next_attempt_at: Nullable(
    Type.String({
      format: 'date-time',
      description:
        'When the delivery is tried next. While an attempt is under way, when it is tried again should that attempt end unrecorded (a crash).',
    }),
  ),
  ...Timestamps,
})
export type WebhookDelivery = Static<typeof WebhookDelivery>

export const WebhookDeliveryListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(DeliveryStatus), event_type: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
)
export type WebhookDeliveryListQuery = Static<typeof WebhookDeliveryListQuery>

export const WebhookEndpointPage = PageOf(WebhookEndpoint)
export const WebhookDeliveryPage = PageOf(WebhookDelivery)

export const DeliveryParams = Type.Object({
  id: Type.String({ maxLength: 64 }),
  delivery_id: Type.String({ maxLength: 64 }),
})

/** What a receiver gets: one audit record of the tenant, with the resource as it is now. */
export const WebhookEvent = Type.Object({
  id: Type.String({
    description: '`evt_` + the audit record id; the same on every retry (use it to drop duplicates).',
    examples: ['evt_al_01jd3k8m9v4q2w6e8r0t2y4u6i'],
  }),
  type: Type.String({ description: 'The audit action, or `ping` for a test.', examples: ['use_case.created'] }),
  created_at: Type.String({ format: 'date-time' }),
  tenant: Type.String(),
  sequence: Nullable(
    Type.Integer({
      description: 'The audit record’s sequence number in the tenant’s log (gap-free, in commit order).',
    }),
  ),
  data: Type.Object({
    ...AuditLog.properties,
    resource: Nullable(Type.Record(Type.String(), Type.Unknown()), {
      description: 'The resource as its GET returns it when sent; null when deleted.',
    }),
  }),
})
export type WebhookEvent = Static<typeof WebhookEvent>

/** The OpenAPI 3.1 `webhooks` section: what the service POSTs to an endpoint. */
export const webhooksDocument = {
  event: {
    post: {
      operationId: 'receiveWebhookEvent',
      summary: 'An event, POSTed to each subscribed webhook endpoint',
      description:
        'Signed per Standard Webhooks: verify `webhook-signature` (space-separated `v1,<base64 HMAC-SHA256>` values, one per active secret) over `<webhook-id>.<webhook-timestamp>.<raw body>` with the endpoint secret (base64 after `whsec_`), and refuse old timestamps. Answer 2xx within 10 s to acknowledge; anything else is retried with backoff for 24 h (Retry-After is honoured). 410 Gone disables the endpoint. Delivery is at least once: drop duplicates by `webhook-id`.',
      tags: ['webhooks'],
      parameters: [
        {
          name: 'webhook-id',
          in: 'header' as const,
          required: true,
          schema: { type: 'string' },
          description: 'The event id; the same on every retry.',
        },
        {
          name: 'webhook-timestamp',
          in: 'header' as const,
          required: true,
          schema: { type: 'string' },
          description: 'Seconds since the epoch when this attempt was signed.',
        },
        {
          name: 'webhook-signature',
          in: 'header' as const,
          required: true,
          schema: { type: 'string' },
          description: '`v1,<base64>` signatures, space-separated.',
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: WebhookEvent } } },
      responses: {
        '200': { description: 'Any 2xx acknowledges the event.' },
        '410': { description: 'Gone: the service disables the endpoint.' },
      },
    },
  },
}
