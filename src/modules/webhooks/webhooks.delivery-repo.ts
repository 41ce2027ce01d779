import { type Kysely, sql } from 'kysely'
import { anyOf, anyOfValue } from '../../db/any-of.js'
import type { Database, DialectName } from '../../db/create-db.js'
import type { Tables, WebhookDeliveryRow, WebhookEndpointRow } from '../../db/tables.js'
import { idFloor, now } from '../../shared/ids.js'
import { auditLogJson } from '../audit-logs/audit-logs.service.js'

// The dispatcher's queries (webhooks.delivery.ts and its parts): the log read as an outbox, the fan-out, claims
// under a lease and the delivery log's retention. Its single-row writes share webhooks.repo.ts with the API's.

type Db = Kysely<Tables>

/**
 * A lease: the delivery is this instance's until then, and due again then should its attempt go unrecorded. Due
 * only then, it leaves the range of due deliveries that every claim reads, which would otherwise pass over every
 * delivery in flight.
 */
export const leased = (until: string) => ({ lease_until: until, next_attempt_at: until })
/** A lease given back: due at once, for any instance. */
const released = () => ({ lease_until: null, next_attempt_at: now() })

/** The enabled endpoints, by id, each with its cursor and its tenant's last audit sequence number. */
export function enabledEndpoints(db: Db) {
  return db
    .selectFrom('webhook_endpoints as e')
    .innerJoin('tenants as t', 't.id', 'e.tenant_id')
    .select(['e.id', 'e.tenant_id', 'e.cursor_seq', 't.audit_seq'])
    .where('e.enabled', '=', 1)
    .orderBy('e.id')
    .execute()
}

/** The endpoint, locked until the fan-out's transaction ends; on PostgreSQL none while another instance holds it. */
export function lockForFanOut(
  tx: Db,
  dialect: DialectName,
  tenantId: string,
  endpointId: string,
): Promise<WebhookEndpointRow | undefined> {
  let lock = tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', endpointId)
  if (dialect === 'postgres') lock = lock.forUpdate().skipLocked()
  return lock.executeTakeFirst()
}

/** Which due deliveries a claim takes: at most `limit`, oldest due first, none of the endpoints or tenants passed over. */
export interface DueFilter {
  at: string
  limit: number
  skipEndpoints: string[]
  skipTenants: string[]
}

/** The pending deliveries of enabled endpoints that are due at `at` and leased to no one. */
function due(db: Db, { at, limit, skipEndpoints, skipTenants }: DueFilter) {
  let due = db
    .selectFrom('webhook_deliveries')
    .select('id')
    // A literal, so that the planner may read the index of pending deliveries, whose condition it is.
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', '<=', at)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
    .where('endpoint_id', 'in', db.selectFrom('webhook_endpoints').select('id').where('enabled', '=', 1))
    .orderBy('next_attempt_at')
    .limit(limit)
  if (skipEndpoints.length > 0) due = due.where('endpoint_id', 'not in', skipEndpoints)
  if (skipTenants.length > 0) due = due.where('tenant_id', 'not in', skipTenants)
  return due
}

/** Whether any delivery is due: a read, which takes no write lock. */
export async function anyDue(db: Db, filter: DueFilter): Promise<boolean> {
  return (await due(db, filter).limit(1).executeTakeFirst()) !== undefined
}

/** Leases the due deliveries to this instance until `leaseUntil` and returns them (PostgreSQL: SKIP LOCKED). */
export function claimDue(
  db: Db,
  dialect: DialectName,
  filter: DueFilter,
  leaseUntil: string,
): Promise<WebhookDeliveryRow[]> {
  let ids = due(db, filter)
  if (dialect === 'postgres') ids = ids.forUpdate().skipLocked()
  return db.updateTable('webhook_deliveries').set(leased(leaseUntil)).where('id', 'in', ids).returningAll().execute()
}

/** The endpoints of these ids, of these tenants. */
export function endpointsById(db: Db, tenantIds: string[], ids: string[]): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('tenant_id', 'in', tenantIds)
    .where('id', 'in', ids)
    .execute()
}

/** Gives the leases of these deliveries back, so that any instance sends them now. */
export async function releaseLeases(db: Db, ids: string[]): Promise<void> {
  await db.updateTable('webhook_deliveries').set(released()).where('id', 'in', ids).execute()
}

/** Marks the endpoint failing since `at`, unless it is marked already. */
export async function markFailing(db: Db, tenantId: string, id: string, at: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('failing_since', 'is', null)
    .execute()
}

/**
 * Deletes the finished deliveries created before `beforeMs`, read through the primary key: an id's time is never
 * earlier than its delivery's creation. A retried delivery keeps its id and takes a new creation time, so that is
 * tested too.
 */
export async function deleteFinishedBefore(db: Db, beforeMs: number): Promise<void> {
  await db
    .deleteFrom('webhook_deliveries')
    .where('id', '<', idFloor('whd', beforeMs))
    .where('created_at', '<', new Date(beforeMs).toISOString())
    .where('status', '!=', 'pending')
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
 * (it is then due when the lease runs out, as `leased` sets it).
 */
export type FreshDelivery = [id: string, auditId: string, eventType: string, leaseUntil: string | null]

/**
 * The dispatcher's statements that run for every event, compiled once, each taking its lists in one
 * parameter (JSON text on SQLite, an array or JSON on PostgreSQL): built per turn by the query builder, a batch of
 * 500 deliveries would be a new statement of 7 500 parameters to compile, prepare and bind each time.
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

export type DispatchStatements = ReturnType<typeof dispatchStatements>
