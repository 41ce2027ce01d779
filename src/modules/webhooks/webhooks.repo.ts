import { type Kysely, sql } from 'kysely'
import { anyOf, anyOfValue } from '../../db/any-of.js'
import type { Database } from '../../db/create-db.js'
import type { Tables, WebhookDeliveryRow, WebhookEndpointRow } from '../../db/tables.js'
import { auditLogJson } from '../audit-logs/audit-logs.repo.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import type { WebhookDeliveryListQuery } from './webhooks.schemas.js'

type Db = Kysely<Tables>

export function findEndpoint(db: Db, tenantId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export function listEndpoints(db: Db, tenantId: string, ks: Keyset): Promise<WebhookEndpointRow[]> {
  return applyKeyset(db.selectFrom('webhook_endpoints').selectAll().where('tenant_id', '=', tenantId), ks).execute()
}

export async function countEndpoints(db: Db, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function insertEndpoint(db: Db, row: WebhookEndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute()
}

export async function updateEndpoint(
  db: Db,
  tenantId: string,
  id: string,
  set: Partial<WebhookEndpointRow>,
): Promise<void> {
  await db.updateTable('webhook_endpoints').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteEndpoint(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('tenant_id', '=', tenantId).where('endpoint_id', '=', id).execute()
  await db.deleteFrom('webhook_endpoints').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

/** The tenant's audit sequence number now: an endpoint created or re-enabled takes events after it. */
export async function tenantAuditSeq(db: Db, tenantId: string): Promise<number> {
  const row = await db.selectFrom('tenants').select('audit_seq').where('id', '=', tenantId).executeTakeFirstOrThrow()
  return row.audit_seq
}

export function findDelivery(
  db: Db,
  tenantId: string,
  endpointId: string,
  id: string,
): Promise<WebhookDeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export function listDeliveries(
  db: Db,
  tenantId: string,
  endpointId: string,
  filter: Pick<WebhookDeliveryListQuery, 'status' | 'event_type'>,
  ks: Keyset,
) {
  let q = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('endpoint_id', '=', endpointId)
  if (filter.status !== undefined) q = q.where('status', '=', filter.status)
  if (filter.event_type !== undefined) q = q.where('event_type', '=', filter.event_type)
  return applyKeyset(q, ks).execute()
}

export async function insertDelivery(db: Db, row: WebhookDeliveryRow): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute()
}

export async function updateDelivery(
  db: Db,
  tenantId: string,
  id: string,
  set: Partial<WebhookDeliveryRow>,
): Promise<void> {
  await db.updateTable('webhook_deliveries').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

/** Per endpoint of the tenant: deliveries by status, and when one last succeeded. */
export function deliveryHealth(db: Db, tenantId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .select((eb) => [
      'endpoint_id',
      'status',
      eb.fn.countAll<number>().as('count'),
      eb.fn.max('last_attempt_at').as('last_attempt_at'),
    ])
    .where('tenant_id', '=', tenantId)
    .groupBy(['endpoint_id', 'status'])
    .execute()
}

/** An audit record as an event sends it: what deliveries are made and grouped by, and its JSON text (`data`). */
export interface EventRecord {
  id: string
  tenant_id: string
  seq: number
  action: string
  created_at: string
  resource_type: string
  resource_id: string | null
  data: string
}

/**
 * A delivery to queue: its id, its audit record's id and action, and its lease when it is taken in hand at once
 * (it is then due when the lease runs out, as claim() sets it).
 */
export type FreshDelivery = [id: string, auditId: string, eventType: string, leaseUntil: string | null]

/**
 * The dispatcher's statements that run for every event, compiled once, each taking its lists in one
 * parameter (JSON text on SQLite, an array or JSON on PostgreSQL). Built per turn by the query builder, a batch of
 * 500 deliveries was a new statement of 7 500 parameters to compile, prepare and bind each time.
 */
export function dispatchStatements({ db, dialect }: Database) {
  const events = db
    .selectFrom('audit_logs')
    .select([
      'id',
      'tenant_id',
      'seq',
      'action',
      'created_at',
      'resource_type',
      'resource_id',
      auditLogJson(dialect).as('data'),
    ])
  const after = events.where('tenant_id', '=', '').where('seq', '>', 0).orderBy('seq').limit(0).compile()
  const byId = events.where(anyOf(dialect, 'tenant_id')).where(anyOf(dialect, 'id')).compile()
  const list = dialect === 'sqlite' ? sql`json_each(${''}) d` : sql`json_array_elements(${''}::json) d(value)`
  // Parameters: tenant, endpoint, the time thrice, then the deliveries as JSON.
  const insert =
    sql`insert into webhook_deliveries (id, tenant_id, endpoint_id, audit_id, event_type, status, attempts, next_attempt_at, lease_until, created_at, updated_at)
      select d.value ->> 0, ${''}, ${''}, d.value ->> 1, d.value ->> 2, 'pending', 0, coalesce(d.value ->> 3, ${''}), d.value ->> 3, ${''}, ${''}
      from ${list} where true
      on conflict (endpoint_id, audit_id) do nothing
      returning id`.compile(db)
  // Parameters: the status code, the time twice, then the ids.
  const succeeded =
    sql`update webhook_deliveries set status = 'succeeded', attempts = attempts + 1, last_status_code = ${0}, last_error = null,
      last_attempt_at = ${''}, next_attempt_at = null, lease_until = null, updated_at = ${''} where ${anyOf(dialect, 'id')}`.compile(
      db,
    )
  return {
    /** The tenant's records after `seq`, oldest first, at most `limit`. */
    async eventsAfter(tenantId: string, seq: number, limit: number): Promise<EventRecord[]> {
      return (await db.executeQuery<EventRecord>({ ...after, parameters: [tenantId, seq, limit] })).rows
    },
    /** The records of these ids, of these tenants. */
    async eventsById(tenantIds: string[], ids: string[]): Promise<EventRecord[]> {
      return (
        await db.executeQuery<EventRecord>({
          ...byId,
          parameters: [anyOfValue(dialect, tenantIds), anyOfValue(dialect, ids)],
        })
      ).rows
    },
    /** Queues deliveries of one endpoint; returns the ids inserted (a record queued for the endpoint before keeps its delivery). */
    async insertDeliveries(
      tx: Db,
      tenantId: string,
      endpointId: string,
      at: string,
      deliveries: FreshDelivery[],
    ): Promise<string[]> {
      const { rows } = await tx.executeQuery<{ id: string }>({
        ...insert,
        parameters: [tenantId, endpointId, at, at, at, JSON.stringify(deliveries)],
      })
      return rows.map((r) => r.id)
    },
    /** Marks acknowledged deliveries succeeded. */
    async recordSucceeded(tx: Db, status: number, ids: string[], at: string): Promise<void> {
      await tx.executeQuery({ ...succeeded, parameters: [status, at, at, anyOfValue(dialect, ids)] })
    },
  }
}
