import { EventEmitter } from 'node:events'
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import { type CompiledQuery, Kysely, type LogEvent, sql, SqliteDialect, type SqliteDatabase } from 'kysely'
import { LRUCache } from 'lru-cache'
import { createRequire } from 'node:module'
import type pgTypes from 'pg'
import { CurrentSchemaPostgresDialect } from './current-schema-introspector.js'
import { startCheckpointer } from './sqlite-checkpointer.js'
import type { TransactionOptions } from './group-members.js'
import { groupCommitPostgres } from './postgres-group-commit.js'
import { groupCommit } from './sqlite-group-commit.js'
import type { AuditLogRow, Tables } from './tables.js'

export type DialectName = 'sqlite' | 'postgres'
export type { TransactionOptions }

export interface Database {
  db: Kysely<Tables>
  dialect: DialectName
  /**
   * Emits 'audit' with the tenant id and the records appended after a mutation that wrote audit records commits (the
   * audit feed passes it on to event streams and webhook delivery; the kept records move on), and 'webhookEndpoints'
   * after one that created or enabled a webhook endpoint of the tenant (the feed passes it on to webhook delivery).
   */
  commits: EventEmitter<{
    audit: [tenantId: string, appended: readonly AuditLogRow[]]
    webhookEndpoints: [tenantId: string]
  }>
  close(): Promise<void>
  /** Calls `observer` after every query with its duration (the metrics' database latency). */
  observeQueries(observer: QueryObserver): void
  /** PostgreSQL: the connection pool's counts; undefined on SQLite (one connection, no pool). */
  poolStats(): { total: number; idle: number; waiting: number } | undefined
  /**
   * SQLite: runs a read at once, without Kysely's promise round trip (a cached GET's one query), when no
   * transaction is open on the one connection (a read inside one would see its uncommitted writes). Undefined
   * when it cannot, and always on PostgreSQL: use Kysely then.
   */
  readNow<R>(query: CompiledQuery<R>): R[] | undefined
  /**
   * The group commit (docs/architecture.md, "The write path and group commit"): runs `work` in a transaction that
   * may commit together with others, and resolves once it has committed; rolls back and rejects when `work` throws.
   * Transactions that start in the same turn of the event loop commit together, each in a savepoint of its own (one
   * that fails is rolled back alone): on SQLite all of them, the write lock taken up front (BEGIN IMMEDIATE; see
   * groupCommit); on PostgreSQL those of the same `group` (see groupCommitPostgres), the others each in a plain
   * transaction on a pooled connection of its own. `work` may be run twice (a rerun after another member failed):
   * it must not act outside the database.
   */
  groupedTransaction<T>(work: (tx: Kysely<Tables>) => Promise<T>, options?: TransactionOptions<T>): Promise<T>
}

export type QueryObserver = (durationMs: number, failed: boolean) => void

/** Kysely's log hook, pointed at an observer that may be set after the database is opened. */
function queryLog() {
  let observer: QueryObserver | undefined
  return {
    log: (event: LogEvent) => observer?.(event.queryDurationMillis, event.level === 'error'),
    observeQueries: (o: QueryObserver) => {
      observer = o
    },
  }
}

// pg is loaded only when PostgreSQL is used (it costs start time on SQLite).
const require = createRequire(import.meta.url)
let pgModule: typeof pgTypes | undefined
function loadPg(): typeof pgTypes {
  if (!pgModule) {
    pgModule = require('pg') as typeof pgTypes
    // pg returns BIGINT as a string; our counters and sequence numbers fit in a double.
    pgModule.types.setTypeParser(20, (value) => Number(value))
  }
  return pgModule
}

export interface DatabaseOptions {
  onPoolError?: (err: Error) => void
  /** PostgreSQL: fail a query left unanswered this long (default QUERY_TIMEOUT_MS; 0 = never, for long maintenance work). */
  queryTimeoutMs?: number
  /** PostgreSQL: connections in the pool at most (default 10). */
  poolSize?: number
  /**
   * SQLite: temporary files (the sorts of an index build, of VACUUM INTO) on disk, for long maintenance work; a
   * serving connection keeps them in memory, where they hold only a group commit's savepoint journals.
   */
  tempFilesOnDisk?: boolean
  /**
   * SQLite: no checkpointing thread; the connection checkpoints itself as SQLite does by default. For a connection
   * open a few milliseconds (the migration check of every start), where starting and stopping the thread costs more.
   */
  selfCheckpointing?: boolean
  /**
   * PostgreSQL: every statement planned for the tables as they are when it runs (plan_cache_mode), not once per
   * connection. For a pool whose statements are few and read tables whose size swings (a queue filling from empty).
   */
  planEveryRun?: boolean
}

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  if (url.startsWith('sqlite:')) return createSqlite(url.slice('sqlite:'.length), options)
  return createPostgres(url, options)
}

/** The database could not be opened or reached at start: one line naming DATABASE_URL, never its password. */
export class DatabaseStartError extends Error {}

/** How long a statement waits for a lock another connection holds (another process writing, a checkpoint). */
const SQLITE_BUSY_TIMEOUT_MS = 5000

function createSqlite(path: string, options: DatabaseOptions): Database {
  let sqlite: SQLite.Database
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
    sqlite = new SQLite(path)
    // WAL needs to write beside the file: a read-only place fails here rather than on the first write.
    sqlite.pragma('journal_mode = WAL')
  } catch (err) {
    throw new DatabaseStartError(
      `DATABASE_URL: cannot open the SQLite file ${resolve(path)}: ${(err as Error).message}`,
    )
  }
  // NORMAL in WAL mode loses nothing when the process dies; only an OS crash could drop the last commits.
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  // Each member of a group commit runs in a savepoint (sqlite-group-commit.ts), whose journal keeps the pages it
  // changes as they were: past 64 KB that journal went to a temporary file (under full create load, 13 pwrite calls
  // per create in all; 6 with it in memory). It holds what one group changed at most.
  if (!options.tempFilesOnDisk) sqlite.pragma('temp_store = MEMORY')
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
  const stopCheckpointer =
    path === ':memory:' || options.selfCheckpointing ? async () => undefined : startCheckpointer(sqlite, path)
  const { log, observeQueries } = queryLog()
  const statements = withStatementCache(sqlite)
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: statements }), log })
  // The checkpointer's connection closes first, so the last one (ours) folds the log into the file as it closes.
  const close = async () => {
    await stopCheckpointer()
    await db.destroy()
  }
  const readNow = <R>(query: CompiledQuery<R>) =>
    sqlite.inTransaction ? undefined : (statements.prepare(query.sql).all(query.parameters) as R[])
  const transaction = groupCommit(db, sqlite, SQLITE_BUSY_TIMEOUT_MS)
  return {
    db,
    dialect: 'sqlite',
    commits: new EventEmitter(),
    close,
    observeQueries,
    poolStats: () => undefined,
    readNow,
    groupedTransaction: transaction,
  }
}

/** How long one query may go unanswered before its request fails with 503 (a partition must not hang requests). */
export const QUERY_TIMEOUT_MS = 2000

/**
 * A pg client that survives its connection dying while checked out of the pool: the failure reaches the
 * running query (and so the request, as a 503), never the process as an unhandled 'error' event. A query
 * that times out also drops its connection, so the pool replaces it instead of queueing behind a dead one.
 */
function resilientClient(pg: typeof pgTypes, statementNames: StatementNames) {
  return class ResilientClient extends pg.Client {
    constructor(config?: string | pgTypes.ClientConfig) {
      super(config)
      this.on('error', () => undefined)
    }

    /** The statements this connection has prepared (named), counted against PREPARED_PER_CONNECTION. */
    private readonly preparedHere = new Set<string>()

    // biome-ignore lint/suspicious/noExplicitAny: overrides pg.Client.query, whose overloads return any of several shapes
    override query(...args: unknown[]): any {
      // Kysely sends (text, values): a statement run before goes by its name, which pg prepares once per connection.
      const [text, values] = args
      const name =
        typeof text === 'string' && Array.isArray(values) && values.length > 0 ? this.statementName(text) : undefined
      if (name !== undefined) args = [{ name, text, values }, ...args.slice(2)]
      const result = (super.query as (...a: unknown[]) => unknown)(...args)
      if (result instanceof Promise) {
        result.catch((err: Error & { code?: string }) => {
          if (err?.message === 'Query read timeout')
            (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy()
          // A migration changed the columns of a table a prepared `select *` reads (another instance's, in a rolling
          // deploy): this statement fails once, and the text is prepared anew under another name on its next run.
          if (name !== undefined && err?.code === FEATURE_NOT_SUPPORTED) statementNames.forget(text as string)
        })
      }
      return result
    }

    /**
     * The name to run `text` under: none on its first run anywhere (a one-off text is not worth a prepared statement
     * held for the connection's life), and none once the connection holds PREPARED_PER_CONNECTION statements of
     * other texts, which bounds what a flood of query shapes can make the server keep.
     */
    private statementName(text: string): string | undefined {
      const name = statementNames.nameOf(text)
      if (name === undefined || this.preparedHere.has(name)) return name
      if (this.preparedHere.size >= PREPARED_PER_CONNECTION) return undefined
      this.preparedHere.add(name)
      return name
    }
  }
}

const STATEMENT_CACHE_SIZE = 500
/** Prepared statements one PostgreSQL connection holds at most (its server process keeps each one's plan). */
const PREPARED_PER_CONNECTION = 200
/** PostgreSQL's code for "cached plan must not change result type" (among other features it lacks). */
const FEATURE_NOT_SUPPORTED = '0A000'

const RUN_ONCE = 0

/**
 * A pool's PostgreSQL statement names by SQL text. Every statement with parameters runs prepared from its second run
 * on, parsed and planned once per connection instead of on every run, which is a large share of the database
 * server's CPU under a create storm (design-measurements.md, "Prepared statements"). Kysely binds parameters, never
 * inlines them, so the texts come from a bounded set of query shapes; the LRU bound keeps a flood of shapes from
 * growing the map. A name is never reused for another text (pg refuses a name prepared with a different text on a
 * connection).
 */
class StatementNames {
  /** RUN_ONCE: run once so far. */
  private readonly names = new LRUCache<string, string | typeof RUN_ONCE>({ max: STATEMENT_CACHE_SIZE })
  private named = 0

  /** The name to run `text` under: none on its first run (a one-off text is not worth a prepared statement). */
  nameOf(text: string): string | undefined {
    const known = this.names.get(text)
    if (known === undefined) {
      this.names.set(text, RUN_ONCE)
      return undefined
    }
    if (known !== RUN_ONCE) return known
    const name = `aigov_${++this.named}`
    this.names.set(text, name)
    return name
  }

  /** The text is prepared anew, under another name, on its next run. */
  forget(text: string): void {
    this.names.delete(text)
  }
}

/**
 * Kysely prepares every query anew; a better-sqlite3 statement can be reused, so the most recent ones are kept
 * by their SQL text. Kysely's SQLite driver runs one query at a time on its one connection, so a cached
 * statement is never in use twice at once.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>()
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql)
      if (!statement) {
        statement = sqlite.prepare(sql)
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!)
        statements.set(sql, statement)
      }
      return statement
    },
  } as SqliteDatabase
}

function createPostgres(url: string, options: DatabaseOptions): Database {
  const timeout = options.queryTimeoutMs ?? QUERY_TIMEOUT_MS
  const pg = loadPg()
  const poolSize = options.poolSize ?? 10
  const pool = new pg.Pool({
    Client: resilientClient(pg, new StatementNames()),
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    ...(timeout > 0
      ? // The server gives up on a statement a little after the client has, so it never runs on unobserved.
        { query_timeout: timeout, statement_timeout: timeout + 1000 }
      : {}),
    keepAlive: true,
  })
  // An idle client losing its server must not crash the process; the next query reports the failure.
  pool.on('error', (err) => options.onPoolError?.(err))
  // Queued on the new connection before any statement of its first user.
  if (options.planEveryRun)
    pool.on('connect', (client) => void client.query('set plan_cache_mode = force_custom_plan').catch(() => undefined))
  const { log, observeQueries } = queryLog()
  const db = new Kysely<Tables>({ dialect: new CurrentSchemaPostgresDialect({ pool }), log })
  return {
    db,
    dialect: 'postgres',
    commits: new EventEmitter(),
    close: () => db.destroy(),
    observeQueries,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    readNow: () => undefined,
    groupedTransaction: groupCommitPostgres(db, poolSize),
  }
}

/** True for a UNIQUE constraint violation on either database. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

/** True for a FOREIGN KEY violation on either database (the referenced row vanished concurrently). */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
}

/** True when the database could not be reached or answered with a connection-level failure. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null
  const code = typeof e?.code === 'string' ? e.code : ''
  const message = typeof e?.message === 'string' ? e.message : ''
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'ENOTFOUND',
      'EHOSTUNREACH',
      'SQLITE_BUSY',
      '57P01',
      '57P03',
      '53300',
    ].includes(code) ||
    code.startsWith('08') ||
    /timeout exceeded when trying to connect|Connection terminated|Query read timeout/i.test(message)
  )
}

/** DATABASE_URL as it may be shown: without its password. */
export function describeDatabaseUrl(url: string): string {
  if (url.startsWith('sqlite:')) return url
  const parsed = new URL(url)
  if (parsed.password) parsed.password = '***'
  return `${parsed.protocol}//${parsed.username ? `${parsed.username}${parsed.password ? ':***' : ''}@` : ''}${parsed.host}${parsed.pathname}`
}

/**
 * Start-up waits for a database that is still coming up (containers starting together), retrying with
 * backoff up to `timeoutSeconds`, then fails with one line. Errors other than "unreachable" fail at once.
 */
export async function waitForDatabase(
  database: Database,
  url: string,
  timeoutSeconds: number,
  onRetry?: (err: Error, delayMs: number) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      await sql`select 1`.execute(database.db)
      return
    } catch (err) {
      const reason = (err as Error).message || (err as { code?: string }).code || String(err)
      if (!isDatabaseUnavailable(err) && !isConnectionFailure(err)) {
        throw new DatabaseStartError(`DATABASE_URL: ${describeDatabaseUrl(url)} refused the connection: ${reason}`)
      }
      const wait = Math.min(delay, deadline - Date.now())
      if (wait <= 0) {
        throw new DatabaseStartError(
          `DATABASE_URL: ${describeDatabaseUrl(url)} is unreachable after ${timeoutSeconds} s (DATABASE_CONNECT_TIMEOUT_S): ${reason}`,
        )
      }
      onRetry?.(err as Error, wait)
      await new Promise((r) => setTimeout(r, wait))
    }
  }
}

/** DNS failures and the like, which isDatabaseUnavailable (a running service's view) does not count. */
function isConnectionFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && ['EAI_AGAIN', 'ENETUNREACH', 'ECONNABORTED'].includes(code)
}
