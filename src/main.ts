import { randomBytes } from 'node:crypto'
import cluster from 'node:cluster'
import { createRequire } from 'node:module'
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer } from 'node:net'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { buildApp } from './app.js'
import { checkBootstrapKey, type Config } from './config.js'
import { createDatabase, type Database, isUniqueViolation, waitForDatabase } from './db/create-db.js'
import { migrateToLatest } from './db/migrate.js'
import { createApiKeysService } from './modules/api-keys/api-keys.service.js'
import { sealLegacyProofs } from './modules/audit-logs/audit-logs.service.js'
import { createEvidenceService, startEvidenceSweeper } from './modules/evidence/evidence.service.js'
import { hasActiveAdminKey, findKeyByHash } from './modules/api-keys/api-keys.repo.js'
import { KeyStatusCache } from './modules/api-keys/key-status.js'
import { listenForRevocations } from './modules/api-keys/revocations.js'
import { hashSecret } from './modules/api-keys/secrets.js'
import { TokenService } from './modules/auth/tokens.js'
import { webhookEncryptionKey } from './modules/webhooks/webhook-secrets.js'
import { WebhookResolver } from './modules/webhooks/webhook-dns.js'
import { tenantProvisioners } from './modules/tenants/tenant-provisioners.js'
import { createTenantsService } from './modules/tenants/tenants.service.js'
import { ensureSystemStages } from './modules/workflow-stages/workflow-stages.service.js'
import { systemCtx } from './shared/context.js'
import { AuditAppender, withAudit } from './shared/audit-append.js'
import { auditKeys } from './shared/audit-chain.js'
import type { Deps } from './shared/deps.js'
import { now } from './shared/ids.js'
import { redactQuery } from './shared/urls.js'
import { createReadModel } from './read-model/index.js'
import { createMetrics } from './shared/metrics.js'
import { requestCounters } from './http/plugins/request-counters.js'
import { createRedis, waitUntilReady } from './shared/redis.js'

const require = createRequire(import.meta.url)

/** JSON lines, or human-readable lines when a person watches the terminal (pino-pretty, loaded only then). */
export function createLogger(config: Config): FastifyBaseLogger {
  const options = {
    level: config.logLevel,
    base: { service: 'aigov' },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'headers.authorization',
        'headers["x-api-key"]',
        'api_key',
        'key',
        'access_token',
        'secret',
      ],
      censor: '[redacted]',
    },
    serializers: {
      // Fastify's request serializer with credentials in the query string (?access_token=…) masked.
      req: (req: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
        method: req.method,
        url: redactQuery(req.url),
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
    },
  }
  if (!process.stdout.isTTY) return pino(options) as FastifyBaseLogger
  const pretty = require('pino-pretty') as typeof import('pino-pretty')
  return pino(
    options,
    pretty({ sync: true, ignore: 'pid,hostname,service', translateTime: 'SYS:HH:MM:ss.l' }),
  ) as FastifyBaseLogger
}

export { redactQuery }

/**
 * `maintenance` (CLI commands, bulk work) lifts the per-query timeout that protects request latency, and keeps
 * SQLite's temporary files on disk (an index build over millions of rows sorts them there).
 */
export function openDatabase(
  config: Config,
  log: FastifyBaseLogger,
  options: { maintenance?: boolean; selfCheckpointing?: boolean } = {},
): Database {
  return createDatabase(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    onPoolError: (err) => log.warn({ err: err.message }, 'database connection lost'),
    ...(options.maintenance ? { queryTimeoutMs: 0, tempFilesOnDisk: true } : {}),
    selfCheckpointing: options.selfCheckpointing,
  })
}

/** The token signing secret: from the setting, else generated once and kept in the database. */
export async function signingSecret(config: Config, database: Database): Promise<string> {
  if (config.jwtSecret) return config.jwtSecret
  await database.db
    .insertInto('settings')
    .values({ key: 'jwt_secret', value: randomBytes(48).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute()
  const row = await database.db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', 'jwt_secret')
    .executeTakeFirstOrThrow()
  return row.value
}

/** Migrations can outlast the per-query timeout (an index on a large table): they run on a connection without it. */
export async function migrate(config: Config, log: FastifyBaseLogger): Promise<string[]> {
  const database = openDatabase(config, log, { maintenance: true, selfCheckpointing: true })
  try {
    await waitUntilDatabaseAnswers(config, database, log)
    return await migrateAndSeal(config, database)
  } finally {
    await database.close()
  }
}

const LEGACY_PROOFS_MIGRATION = '2026-12-01T11-audit-legacy-proofs'

/**
 * Applies pending migrations, then seals with the chain key what the legacy proofs migration recorded, if this
 * call applied it: a migration holds no keys, and a proof left unsealed later is not sealed by any start.
 */
export async function migrateAndSeal(config: Config, database: Database): Promise<string[]> {
  const applied = await migrateToLatest(database)
  if (applied.includes(LEGACY_PROOFS_MIGRATION)) {
    const keys = auditKeys(config, await signingSecret(config, database))
    await sealLegacyProofs(database.db, keys)
  }
  return applied
}

export async function waitUntilDatabaseAnswers(
  config: Config,
  database: Database,
  log: FastifyBaseLogger,
): Promise<void> {
  await waitForDatabase(database, config.databaseUrl, config.databaseConnectTimeoutSeconds, (err, delayMs) =>
    log.warn({ err: err.message, retry_in_ms: delayMs }, 'database is not reachable yet; retrying'),
  )
}

export async function createDeps(
  config: Config,
  log: FastifyBaseLogger,
  opened = openDatabase(config, log),
): Promise<Deps> {
  const secret = await signingSecret(config, opened)
  const tokens = new TokenService(secret, config.tokenTtlSeconds)
  const database = withAudit(opened, new AuditAppender(opened, auditKeys(config, secret)))
  const webhookKey = webhookEncryptionKey(config.webhookSecretKey ?? secret)
  // Tenants created before workflow stages came with the tenant get theirs (one query when none is missing).
  await ensureSystemStages(database)
  const redis = config.redisUrl ? createRedis(config.redisUrl, log) : undefined
  if (redis && !(await waitUntilReady(redis))) log.warn('redis is not reachable yet; starting with per-instance state')
  const keyStatus = new KeyStatusCache(database.db)
  const revocationListener = redis ? listenForRevocations(redis, keyStatus) : undefined
  const webhookDns = new WebhookResolver({ servers: config.webhookDnsServers, timeoutMs: config.webhookDnsTimeoutMs })
  return {
    config,
    database,
    tokens,
    keyStatus,
    log,
    metrics: createMetrics(database),
    redis,
    requestCounters: requestCounters(redis, log),
    revocationListener,
    webhookKey,
    webhookDns,
    readModel: createReadModel(database, {
      answerBytes: config.readCacheBytes,
      recordBytes: config.recordCacheBytes,
    }),
  }
}

/** Releases what createDeps opened. */
export async function closeDeps(deps: Deps): Promise<void> {
  deps.revocationListener?.disconnect()
  deps.redis?.disconnect()
  await deps.database.close()
}

/**
 * Makes sure the bootstrap tenant exists and has an admin key: SERVICE_API_KEY when set,
 * else a generated one, printed once with a curl line that uses it.
 */
export async function bootstrap(deps: Deps, print: (text: string) => void): Promise<void> {
  const { config, database } = deps
  const tenant = config.bootstrapTenant
  await createTenantsService(database, tenantProvisioners(config)).ensure(tenant)
  const apiKeys = createApiKeysService(deps)
  const ctx = systemCtx(tenant)
  if (config.bootstrapApiKey) {
    checkBootstrapKey(config.bootstrapApiKey)
    const existing = await findKeyByHash(database.db, hashSecret(config.bootstrapApiKey))
    if (existing && existing.tenant_id !== tenant)
      throw new Error(`SERVICE_API_KEY: already belongs to another tenant than "${tenant}"`)
    if (existing && existing.revoked_at !== null)
      throw new Error('SERVICE_API_KEY: this key has been revoked; set a new one')
    if (!existing) {
      // Instances starting together race to create it; the loser finds it made.
      await apiKeys
        .create(ctx, { name: 'bootstrap (SERVICE_API_KEY)', role: 'admin' }, config.bootstrapApiKey)
        .catch((err: unknown) => {
          if (!isUniqueViolation(err)) throw err
        })
    }
    return
  }
  if (await hasActiveAdminKey(database.db, tenant, now())) return
  const created = await apiKeys.create(ctx, { name: 'bootstrap', role: 'admin' })
  const base = `http://localhost:${config.port}`
  print(
    [
      '',
      `Created an admin API key for tenant "${tenant}". It is shown this once; store it now:`,
      '',
      `  ${created.key}`,
      '',
      "Export it for the README's examples and the aigov client:",
      '',
      `  export SERVICE_API_KEY=${created.key}`,
      '',
      'Or exchange it for an access token yourself:',
      '',
      `  curl -s -X POST ${base}/api/v1/integration/auth/token -H 'X-API-Key: ${created.key}' -H 'X-Tenant: ${tenant}'`,
      '',
    ].join('\n'),
  )
}

export interface RunningService {
  app: FastifyInstance
  deps: Deps
  close(): Promise<void>
}

/**
 * Starts one listening instance: migrate, bootstrap, build, listen. The bootstrap key works from the first
 * request answered; serve() checks the port before any of it, so a taken port prints no key.
 */
export async function startService(config: Config, options: { bootstrap?: boolean } = {}): Promise<RunningService> {
  const log = createLogger(config)
  await migrate(config, log)
  const database = openDatabase(config, log)
  const deps = await createDeps(config, log, database)
  if (!deps.database.audit.keys.independentOfDatabase) {
    log.warn(
      'audit chain keys derive from a secret stored in the database: set SERVICE_JWT_SECRET or AUDIT_CHAIN_KEY so a database writer cannot rewrite audit history undetected',
    )
  }
  if (options.bootstrap !== false) await bootstrap(deps, (text) => process.stdout.write(`${text}\n`))
  const app = await buildApp(deps)
  try {
    await app.listen({ port: config.port, host: config.host })
  } catch (err) {
    await app.close()
    await closeDeps(deps)
    throw listenError(err, config)
  }
  const metricsServer =
    config.metricsPort === undefined
      ? undefined
      : await serveMetrics(deps, config.metricsPort).catch(async (err: unknown) => {
          await app.close()
          await closeDeps(deps)
          throw err
        })
  // Content of uploads a process died in the middle of (this one before its restart, or another instance).
  const sweeper = startEvidenceSweeper(createEvidenceService(deps), deps.log)
  return {
    app,
    deps,
    async close() {
      metricsServer?.close()
      await sweeper.stop()
      await app.close()
      await closeDeps(deps)
    },
  }
}

/** METRICS_PORT: GET /metrics alone on its own port, for a scraper on a private network; no token asked. */
async function serveMetrics(deps: Deps, port: number): Promise<Server> {
  const server = createHttpServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?', 1)[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: this port serves GET /metrics only\n')
      return
    }
    deps.metrics.registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': deps.metrics.registry.contentType }).end(body),
      (err: unknown) => {
        deps.log.error({ err: (err as Error).message }, 'collecting metrics failed')
        res.writeHead(500, { 'content-type': 'text/plain' }).end('collecting metrics failed\n')
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`METRICS_PORT: port ${port} is already in use on ${deps.config.host}`)
          : err,
      ),
    )
    server.listen({ port, host: deps.config.host }, resolve)
  })
  return server
}

/** A listen failure as one line naming the setting to change. */
function listenError(err: unknown, config: Config): Error {
  const code = (err as { code?: string }).code
  const where = `${config.host}:${config.port}`
  if (code === 'EADDRINUSE')
    return new Error(
      `SERVICE_PORT: port ${config.port} is already in use on ${config.host}; stop what listens there or choose another port`,
    )
  if (code === 'EACCES')
    return new Error(`SERVICE_PORT: not allowed to listen on ${where} (ports below 1024 need privileges)`)
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new Error(`SERVICE_HOST: ${config.host} is not an address of this machine`)
  return err as Error
}

/** A taken port stops the start before migrations run or a key is printed (the cluster's primary never listens itself). */
async function assertCanListen(config: Config): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (err) => reject(listenError(err, config)))
    probe.listen({ port: config.port, host: config.host, exclusive: true }, () => probe.close(() => resolve()))
  })
}

/** Stops after `work`, or after SHUTDOWN_TIMEOUT_MS if requests in flight hold it up (exit code 1 then). */
function exitWithin(config: Config, log: FastifyBaseLogger, work: () => Promise<void>): void {
  const timer = setTimeout(() => {
    log.warn(
      { shutdown_timeout_ms: config.shutdownTimeoutMs },
      'shutdown deadline passed; exiting with requests still open',
    )
    process.exit(1)
  }, config.shutdownTimeoutMs)
  timer.unref()
  work().then(
    () => process.exit(0),
    (err: unknown) => {
      log.error({ err: (err as Error).message }, 'shutdown failed')
      process.exit(1)
    },
  )
}

/** `aigov serve`: one process, or a primary that prepares the database and forks SERVICE_WORKERS workers. */
export async function serve(config: Config): Promise<void> {
  // Workers share the primary's port: only the primary (or a single process) checks it, before touching the database.
  if (cluster.isPrimary) await assertCanListen(config)
  if (config.workers > 1 && cluster.isPrimary) {
    const log = createLogger(config)
    await migrate(config, log)
    const deps = await createDeps(config, log, openDatabase(config, log))
    await bootstrap(deps, (text) => process.stdout.write(`${text}\n`))
    await closeDeps(deps)
    let stopping = false
    for (let i = 0; i < config.workers; i++) cluster.fork()
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) return
      log.error({ pid: worker.process.pid, code, signal }, 'worker exited; starting another')
      cluster.fork()
    })
    const stopWorkers = (signal: NodeJS.Signals) => {
      stopping = true
      exitWithin(config, log, async () => {
        const exited = new Promise<void>((resolve) =>
          cluster.on('exit', () => {
            if (Object.keys(cluster.workers ?? {}).length === 0) resolve()
          }),
        )
        for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
        await exited
      })
    }
    process.once('SIGTERM', () => stopWorkers('SIGTERM'))
    process.once('SIGINT', () => stopWorkers('SIGINT'))
    log.info({ workers: config.workers, port: config.port }, 'cluster started')
    return
  }
  const service = await startService(config, { bootstrap: !cluster.isWorker })
  const stop = (signal: string) => {
    service.app.log.info({ signal, shutdown_timeout_ms: config.shutdownTimeoutMs }, 'shutting down')
    exitWithin(config, service.app.log, () => service.close())
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))
}
