import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { CompiledQuery, Kysely, sql, SqliteDialect } from 'kysely'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createDatabase, type Database } from '../../src/db/create-db.js'
import { groupCommit } from '../../src/db/sqlite-group-commit.js'
import type { Tables } from '../../src/db/tables.js'

// On SQLite, transactions started in the same turn of the event loop commit together, each in a savepoint of its
// own. What must hold: each is answered only once it is committed (another connection sees it), one that fails
// is rolled back alone, and a failure that ends the whole transaction fails every member, never half of them.

let dir: string
let file: string
let database: Database
let other: SQLite.Database

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'aigov-group-commit-'))
  file = join(dir, 'test.db')
  database = createDatabase(`sqlite:${file}`)
  await sql`create table notes (id integer primary key, body text not null unique)`.execute(database.db)
  other = new SQLite(file, { readonly: true })
})
afterEach(async () => {
  other.close()
  await database.close()
  rmSync(dir, { recursive: true, force: true })
})

const insert = (tx: Kysely<any>, id: number, body = `note ${id}`) =>
  sql`insert into notes (id, body) values (${id}, ${body})`.execute(tx)
/** What another connection sees committed. */
const committedIds = () =>
  (other.prepare('select id from notes order by id').all() as { id: number }[]).map((r) => r.id)

it('commits transactions started together as one, and answers each once another connection sees it', async () => {
  const seenBySecond: number[][] = []
  const first = database.groupedTransaction(async (tx) => {
    await insert(tx, 1)
    return 'first'
  })
  const second = database.groupedTransaction(async (tx) => {
    await insert(tx, 2)
    // The first one's row is written but not yet committed: they share one transaction.
    seenBySecond.push(committedIds())
    return 'second'
  })
  expect(await first).toBe('first')
  expect(committedIds()).toEqual([1, 2])
  expect(await second).toBe('second')
  expect(seenBySecond).toEqual([[]])
})

it('rolls back a failing member alone: the others commit, it rejects with its own error', async () => {
  const results = await Promise.allSettled([
    database.groupedTransaction((tx) => insert(tx, 1, 'same')),
    database.groupedTransaction(async (tx) => {
      await insert(tx, 2)
      await insert(tx, 3, 'same')
    }),
    database.groupedTransaction(async (tx) => {
      await insert(tx, 4)
      throw new Error('changed its mind')
    }),
    database.groupedTransaction((tx) => insert(tx, 5)),
  ])
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled'])
  expect((results[1] as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_UNIQUE')
  expect((results[2] as PromiseRejectedResult).reason.message).toBe('changed its mind')
  expect(committedIds()).toEqual([1, 5])
})

it('answers a failing member only once the others have committed: what made it fail is there for another connection to see', async () => {
  const seenOnFailure: number[][] = []
  const results = await Promise.allSettled([
    database.groupedTransaction((tx) => insert(tx, 1, 'one')),
    database
      .groupedTransaction((tx) => insert(tx, 2, 'one'))
      .catch((err) => {
        seenOnFailure.push(committedIds())
        throw err
      }),
    database.groupedTransaction((tx) => insert(tx, 3)),
  ])
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  expect(seenOnFailure).toEqual([[1, 3]])
})

it('fails every member when one ends the whole transaction, and writes nothing of any of them', async () => {
  const results = await Promise.allSettled([
    database.groupedTransaction((tx) => insert(tx, 1)),
    database.groupedTransaction(async (tx) => {
      await insert(tx, 2)
      // What SQLite does by itself on a full disk or an I/O error.
      await sql`rollback`.execute(tx)
      throw new Error('database or disk is full')
    }),
    database.groupedTransaction((tx) => insert(tx, 3)),
  ])
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
  for (const r of results) expect((r as PromiseRejectedResult).reason.message).toBe('database or disk is full')
  expect(committedIds()).toEqual([])
  // The connection is usable afterwards.
  await database.groupedTransaction((tx) => insert(tx, 4))
  expect(committedIds()).toEqual([4])
})

it('commits a burst larger than one group in several, every member answered', async () => {
  const ids = Array.from({ length: 150 }, (_, i) => i + 1)
  await Promise.all(ids.map((id) => database.groupedTransaction((tx) => insert(tx, id))))
  expect(committedIds()).toEqual(ids)
})

it('waits for a write lock another connection holds without stalling the thread, then commits', async () => {
  const writer = new SQLite(file)
  writer.exec('begin immediate')
  const committing = database.groupedTransaction((tx) => insert(tx, 1))
  // While the lock is held, timers fire and the service's connection still answers reads.
  const ticks: number[] = []
  const started = performance.now()
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 10))
    ticks.push(performance.now() - started)
    expect(database.readNow<{ n: number }>(CompiledQuery.raw('select count(*) as n from notes'))).toEqual([{ n: 0 }])
  }
  // SQLite's own wait would have held the thread for the whole 100 ms: no timer could have fired before it ended.
  expect(ticks[0]).toBeLessThan(60)
  writer.exec('commit')
  writer.close()
  await committing
  expect(committedIds()).toEqual([1])
})

it('fails a transaction with SQLITE_BUSY once it has waited the busy timeout for the write lock', async () => {
  const writer = new SQLite(file)
  writer.exec('begin immediate')
  const connection = new SQLite(file)
  const kysely = new Kysely<Tables>({ dialect: new SqliteDialect({ database: connection }) })
  const transaction = groupCommit(kysely, connection, 50)
  const started = performance.now()
  await expect(transaction((tx) => insert(tx, 1))).rejects.toMatchObject({ code: 'SQLITE_BUSY' })
  expect(performance.now() - started).toBeGreaterThanOrEqual(45)
  writer.exec('rollback')
  writer.close()
  await kysely.destroy()
  expect(committedIds()).toEqual([])
})

it('finishes once with the results of the members that succeeded, before the commit; a failing finish commits none', async () => {
  const finished: number[][] = []
  const seenAtFinish: number[][] = []
  const finish = async (tx: Kysely<any>, ids: number[]) => {
    finished.push(ids)
    seenAtFinish.push(committedIds())
    await insert(tx, 100 + ids.length)
  }
  await Promise.allSettled(
    [1, 2, 3].map((id) =>
      database.groupedTransaction(
        async (tx) => {
          if (id === 2) throw new Error('no')
          await insert(tx, id)
          return id
        },
        { finish },
      ),
    ),
  )
  expect(finished).toEqual([[1, 3]])
  expect(seenAtFinish).toEqual([[]])
  expect(committedIds()).toEqual([1, 3, 102])

  const failing = async () => {
    throw new Error('the audit log is unreachable')
  }
  const results = await Promise.allSettled(
    [4, 5].map((id) => database.groupedTransaction((tx) => insert(tx, id), { finish: failing })),
  )
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
  expect(committedIds()).toEqual([1, 3, 102])
})

it("keeps the savepoint journals of a serving connection in memory, and a maintenance connection's temporary files on disk", async () => {
  const tempStore = async (db: Database) =>
    (await sql<{ temp_store: number }>`pragma temp_store`.execute(db.db)).rows[0].temp_store
  // 2 is MEMORY; 0 is the default, files.
  expect(await tempStore(database)).toBe(2)
  const maintenance = createDatabase(`sqlite:${file}`, { tempFilesOnDisk: true })
  try {
    expect(await tempStore(maintenance)).toBe(0)
  } finally {
    await maintenance.close()
  }
})
