import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { sql } from 'kysely'
import type { Database } from '../db/create-db.js'

/**
 * The service's Prometheus metrics, one registry per instance (tests build many apps in one process, so
 * nothing goes into prom-client's global registry). Tenant names appear only in the audit gauge, which
 * the metrics endpoint's protection (METRICS_TOKEN / METRICS_PORT) keeps from other tenants.
 */
export function createMetrics(database: Database) {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'aigov_' })
  const httpRequests = new Histogram({
    name: 'aigov_http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status, with their latency',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  const dbQueries = new Histogram({
    name: 'aigov_db_query_duration_seconds',
    help: 'Database queries by outcome, with their latency',
    labelNames: ['outcome'],
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5],
    registers: [registry],
  })
  database.observeQueries((durationMs, failed) =>
    dbQueries.observe({ outcome: failed ? 'error' : 'ok' }, durationMs / 1000),
  )
  new Gauge({
    name: 'aigov_db_pool_connections',
    help: 'PostgreSQL connection pool: connections by state (idle, in use) and requests waiting for one',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const pool = database.poolStats()
      if (!pool) return
      this.set({ state: 'idle' }, pool.idle)
      this.set({ state: 'in_use' }, pool.total - pool.idle)
      this.set({ state: 'waiting' }, pool.waiting)
    },
  })
  const readCache = new Counter({
    name: 'aigov_read_cache_requests_total',
    help: 'Cacheable reads by outcome: hit (answered from memory), not_modified (304 to If-None-Match), miss (rendered)',
    labelNames: ['outcome'],
    registers: [registry],
  })
  const rateLimitRefusals = new Counter({
    name: 'aigov_rate_limit_refusals_total',
    help: 'Requests refused with 429, by route template',
    labelNames: ['route'],
    registers: [registry],
  })
  new Gauge({
    name: 'aigov_audit_chain_records',
    help: "Records in each tenant's audit chain (the sequence number of its head)",
    labelNames: ['tenant'],
    registers: [registry],
    async collect() {
      const rows = await database.db.selectFrom('tenants').select(['id', 'audit_seq']).execute()
      this.reset()
      for (const row of rows) this.set({ tenant: row.id }, Number(row.audit_seq))
    },
  })
  new Gauge({
    name: 'aigov_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting to be sent or retried, across all instances (the delivery backlog)',
    registers: [registry],
    async collect() {
      const row = await database.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', sql.lit('pending'))
        .executeTakeFirstOrThrow()
      this.set(Number(row.n))
    },
  })
  new Gauge({
    name: 'aigov_webhook_events_behind',
    help: "Audit records after enabled webhook endpoints' cursors, summed over the endpoints: events not yet queued for delivery (records an endpoint does not subscribe to count too)",
    registers: [registry],
    async collect() {
      const row = await database.db
        .selectFrom('webhook_endpoints as e')
        .innerJoin('tenants as t', 't.id', 'e.tenant_id')
        .select(sql<number>`coalesce(sum(t.audit_seq - e.cursor_seq), 0)`.as('n'))
        .where('e.enabled', '=', 1)
        .executeTakeFirstOrThrow()
      this.set(Number(row.n))
    },
  })
  const webhookDeliveryYielding = new Gauge({
    name: 'aigov_webhook_delivery_yielding',
    help: "1 while this instance's webhook delivery yields to a busy API (taking few events in hand, the rest waiting in the log), else 0",
    registers: [registry],
  })
  const eventStreamsEnded = new Counter({
    name: 'aigov_event_streams_ended_total',
    help: 'Event streams this instance ended itself, by reason: slow_client (it did not take what it was sent in time; it resumes), revoked, expired (its key or token)',
    labelNames: ['reason'],
    registers: [registry],
  })
  return { registry, httpRequests, readCache, rateLimitRefusals, webhookDeliveryYielding, eventStreamsEnded }
}

export type Metrics = ReturnType<typeof createMetrics>
