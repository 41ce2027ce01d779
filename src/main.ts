import { randomBytes } from 'node:crypto'
import cluster from 'node:cluster'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { createDatabase, type Database, isUniqueViolation } from './db/create-db.js'
import { migrateToLatest } from './db/migrate.js'
import { createApiKeysService } from './modules/api-keys/api-keys.service.js'
import { hasActiveAdminKey, findKeyByHash } from './modules/api-keys/api-keys.repo.js'
import { KeyStatusCache } from './modules/api-keys/key-status.js'
import { listenForRevocations } from './modules/api-keys/revocations.js'
import { hashSecret } from './modules/api-keys/secrets.js'
import { TokenService } from './modules/auth/tokens.js'
import { webhookEncryptionKey } from './modules/webhooks/webhook-secrets.js'
import { tenantProvisioners } from './modules/tenants/tenant-provisioners.js'
import { createTenantsService } from './modules/tenants/tenants.service.js'
import { ensureSystemStages } from './modules/workflow-stages/workflow-stages.service.js'
import { systemCtx } from './shared/context.js'
import type { Deps } from './shared/deps.js'
import { now } from './shared/ids.js'
import { createRedis, waitUntilReady } from './shared/redis.js'

export function createLogger(config: Config): FastifyBaseLogger {
  return pino({
    level: config.logLevel,
    base: { service: 'aigov' },
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]', 'api_key', 'key', 'access_token', 'secret'],
      censor: '[redacted]',
    },
  }) as FastifyBaseLogger
}

/** `maintenance` (CLI commands, bulk work) lifts the per-query timeout that protects request latency. */
export function openDatabase(config: Config, log: FastifyBaseLogger, options: { maintenance?: boolean } = {}): Database {
  return createDatabase(config.databaseUrl, {
    onPoolError: (err) => log.warn({ err: err.message }, 'database connection lost'),
    ...(options.maintenance ? { queryTimeoutMs: 0 } : {}),
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
  const row = await database.db.selectFrom('settings').select('value').where('key', '=', 'jwt_secret').executeTakeFirstOrThrow()
  return row.value
}

/** Migrations can outlast the per-query timeout (an index on a large table): they run on a connection without it. */
export async function migrate(config: Config, log: FastifyBaseLogger): Promise<string[]> {
  const database = openDatabase(config, log, { maintenance: true })
  try {
    return await migrateToLatest(database)
  } finally {
    await database.close()
  }
}

export async function createDeps(config: Config, log: FastifyBaseLogger, database = openDatabase(config, log)): Promise<Deps> {
  const jwtSecret = await signingSecret(config, database)
  const tokens = new TokenService(jwtSecret, config.tokenTtlSeconds)
  const webhookKey = webhookEncryptionKey(config.webhookSecretKey ?? jwtSecret)
  // Tenants created before workflow stages came with the tenant get theirs (one query when none is missing).
  await ensureSystemStages(database)
  const redis = config.redisUrl ? createRedis(config.redisUrl, log) : undefined
  if (redis && !(await waitUntilReady(redis))) log.warn('redis is not reachable yet; starting with per-instance state')
  const keyStatus = new KeyStatusCache(database.db)
  const revocationListener = redis ? listenForRevocations(redis, keyStatus) : undefined
  return { config, database, tokens, keyStatus, log, redis, revocationListener, webhookKey }
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
    const existing = await findKeyByHash(database.db, hashSecret(config.bootstrapApiKey))
    if (existing && existing.tenant_id !== tenant) throw new Error(`SERVICE_API_KEY: already belongs to another tenant than "${tenant}"`)
    if (existing && existing.revoked_at !== null) throw new Error('SERVICE_API_KEY: this key has been revoked; set a new one')
    if (!existing) {
      // Instances starting together race to create it; the loser finds it made.
      await apiKeys.create(ctx, { name: 'bootstrap (SERVICE_API_KEY)', role: 'admin' }, config.bootstrapApiKey).catch((err: unknown) => {
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
      'Exchange it for an access token:',
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

/** Starts one listening instance: migrate, bootstrap, build, listen. */
export async function startService(config: Config, options: { bootstrap?: boolean } = {}): Promise<RunningService> {
  const log = createLogger(config)
  await migrate(config, log)
  const database = openDatabase(config, log)
  const deps = await createDeps(config, log, database)
  if (options.bootstrap !== false) await bootstrap(deps, (text) => process.stdout.write(text + '\n'))
  const app = await buildApp(deps)
  await app.listen({ port: config.port, host: config.host })
  return {
    app,
    deps,
    async close() {
      await app.close()
      await closeDeps(deps)
    },
  }
}

/** `aigov serve`: one process, or a primary that prepares the database and forks SERVICE_WORKERS workers. */
export async function serve(config: Config): Promise<void> {
  if (config.workers > 1 && cluster.isPrimary) {
    const log = createLogger(config)
    await migrate(config, log)
    const deps = await createDeps(config, log, openDatabase(config, log))
    await bootstrap(deps, (text) => process.stdout.write(text + '\n'))
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
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
      cluster.on('exit', () => {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0)
      })
      setTimeout(() => process.exit(0), 10_000).unref()
    }
    process.once('SIGTERM', () => stopWorkers('SIGTERM'))
    process.once('SIGINT', () => stopWorkers('SIGINT'))
    log.info({ workers: config.workers, port: config.port }, 'cluster started')
    return
  }
  const service = await startService(config, { bootstrap: !cluster.isWorker })
  const stop = async (signal: string) => {
    service.app.log.info({ signal }, 'shutting down')
    await service.close()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
}
