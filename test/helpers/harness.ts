import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyBaseLogger, FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { describe } from 'vitest'
import { buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import type { DialectName } from '../../src/db/create-db.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { closeDeps, createDeps, createLogger, openDatabase } from '../../src/main.js'
import { createApiKeysService } from '../../src/modules/api-keys/api-keys.service.js'
import { tenantProvisioners } from '../../src/modules/tenants/tenant-provisioners.js'
import { createTenantsService } from '../../src/modules/tenants/tenants.service.js'
import { type Role, systemCtx } from '../../src/shared/context.js'
import type { Deps } from '../../src/shared/deps.js'

export const PREFIX = '/api/v1/integration'
export const POSTGRES_URL = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : undefined
export const REDIS_URL = process.env.REDIS_URL

/** Runs the suite on SQLite always, and on PostgreSQL when DATABASE_URL points at one (else shows why not). */
export function describeEachDialect(name: string, suite: (dialect: DialectName) => void): void {
  describe(`${name} [sqlite]`, () => suite('sqlite'))
  if (POSTGRES_URL) describe(`${name} [postgres]`, () => suite('postgres'))
  else describe.skip(`${name} [postgres] — skipped: DATABASE_URL does not point at PostgreSQL`, () => suite('postgres'))
}

export interface TestDatabase {
  env: Record<string, string>
  drop(): Promise<void>
}

/** A fresh, empty database: a temporary SQLite file, or a PostgreSQL schema of its own. */
export async function freshDatabase(dialect: DialectName): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'aigov-test-'))
    return {
      env: { DATABASE_URL: `sqlite:${join(dir, 'test.db')}` },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    }
  }
  const schema = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  await client.query(`create schema ${schema}`)
  await client.end()
  return {
    env: {
      DATABASE_URL: `${POSTGRES_URL}${POSTGRES_URL!.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`,
    },
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL })
      await c.connect()
      await c.query(`drop schema ${schema} cascade`)
      await c.end()
    },
  }
}

export interface TestApp {
  app: FastifyInstance
  deps: Deps
  config: Config
  dialect: DialectName
  /** An access token for a key of `role` in `tenant` (created on first use). */
  token(tenant?: string, role?: Role): Promise<string>
  /** Creates an API key directly and returns its secret. */
  apiKey(tenant?: string, role?: Role): Promise<string>
  /** app.inject with a bearer token for (tenant, role). */
  as(tenant: string, role: Role): (opts: InjectOptions & { url: string }) => Promise<LightMyRequestResponse>
  /** Applies pending migrations, as a start does: without the per-query timeout of requests. */
  migrate(): Promise<string[]>
  close(): Promise<void>
}

/**
 * Migrations wait for one lock per database, which every schema of the tests' PostgreSQL database shares: behind
 * other files' migrations that wait can pass the 2 s a request's query may take, so they run as a start runs them.
 */
async function migrateWithoutTimeout(config: Config, log: FastifyBaseLogger): Promise<string[]> {
  const database = openDatabase(config, log, { maintenance: true })
  try {
    return await migrateToLatest(database)
  } finally {
    await database.close()
  }
}

export async function startTestApp(dialect: DialectName, env: Record<string, string> = {}): Promise<TestApp> {
  const database = await freshDatabase(dialect)
  const config = loadConfig({
    SERVICE_JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long',
    LOG_LEVEL: 'silent',
    SERVICE_STARTER_LIBRARY: 'false',
    // Suites make many calls from one address; the rate-limit tests set their own limits.
    RATE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_TOKEN_PER_MINUTE: '100000',
    ...database.env,
    ...env,
  })
  const log = createLogger(config)
  const migrate = () => migrateWithoutTimeout(config, log)
  await migrate()
  const db = openDatabase(config, log)
  const deps = await createDeps(config, log, db)
  const app = await buildApp(deps)
  await app.ready()
  const tenants = createTenantsService(deps.database, tenantProvisioners(config))
  const tokens = new Map<string, string>()

  const apiKey = async (tenant = 'acme', role: Role = 'admin') => {
    await tenants.ensure(tenant)
    const key = await createApiKeysService(deps).create(systemCtx(tenant), { name: `test-${role}`, role })
    return key.key
  }
  const token = async (tenant = 'acme', role: Role = 'admin') => {
    const cached = tokens.get(`${tenant}/${role}`)
    if (cached) return cached
    const secret = await apiKey(tenant, role)
    const res = await app.inject({
      method: 'POST',
      url: `${PREFIX}/auth/token`,
      headers: { 'x-api-key': secret, 'x-tenant': tenant },
    })
    if (res.statusCode !== 200) throw new Error(`token exchange failed: ${res.statusCode} ${res.body}`)
    const value = res.json().access_token as string
    tokens.set(`${tenant}/${role}`, value)
    return value
  }
  return {
    app,
    deps,
    config,
    dialect,
    token,
    apiKey,
    migrate,
    as: (tenant, role) => async (opts) => {
      const bearer = await token(tenant, role)
      return app.inject({
        ...opts,
        url:
          opts.url.startsWith('/') && !opts.url.startsWith(PREFIX) && !opts.url.startsWith('/livez')
            ? PREFIX + opts.url
            : opts.url,
        headers: { authorization: `Bearer ${bearer}`, ...opts.headers },
      })
    },
    async close() {
      await app.close()
      await closeDeps(deps)
      await database.drop()
    },
  }
}
