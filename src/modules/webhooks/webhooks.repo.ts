import type { Kysely } from 'kysely'
import type { Tables, WebhookDeliveryRow, WebhookEndpointRow } from '../../db/tables.js'
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
