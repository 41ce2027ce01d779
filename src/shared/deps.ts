import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { AuditedDatabase } from './audit-append.js'
import type { KeyStatusCache } from '../modules/api-keys/key-status.js'
import type { TokenService } from '../modules/auth/tokens.js'
import type { RequestCounters } from '../http/plugins/request-counters.js'
import type { WebhookResolver } from '../modules/webhooks/webhook-dns.js'
import type { ReadModel } from '../read-model/index.js'
import type { Metrics } from './metrics.js'
import type { RedisClient } from './redis.js'

/** What the modules are built from; made once in main (or a test) and handed to buildApp. */
export interface Deps {
  config: Config
  /** The database, with the audit appender its mutations write through. */
  database: AuditedDatabase
  tokens: TokenService
  keyStatus: KeyStatusCache
  log: FastifyBaseLogger
  metrics: Metrics
  /** Present when REDIS_URL is set: shared rate limits, idempotency records, revocation fan-out. */
  redis: RedisClient | undefined
  /** The request rate limit's counters (in Redis when it answers), one store for every scope that limits requests. */
  requestCounters: RequestCounters
  /** Encrypts webhook signing secrets at rest (from WEBHOOK_SECRET_KEY, else the JWT secret). */
  webhookKey: Buffer
  /** Webhook targets' name lookups, shared by the checks at save and at send (bounded per tenant, cached). */
  webhookDns: WebhookResolver
  /** What is kept of answers and records so that reads skip work (src/read-model). */
  readModel: ReadModel
  /** The connection listening for revocations from other instances (with Redis). */
  revocationListener?: RedisClient
}
