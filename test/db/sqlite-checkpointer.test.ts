import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterEach, expect, it } from 'vitest'
import { createDatabase, type Database } from '../../src/db/create-db.js'

// Commits on SQLite only append to the write-ahead log; a thread of the service copies the log into the database
// file in the background. Without it nothing below the 1000-page mark would reach the file.

let dir: string
let database: Database | undefined
afterEach(async () => {
  await database?.close()
  rmSync(dir, { recursive: true, force: true })
})

it('copies committed writes from the log into the database file in the background, and leaves no log behind on close', async () => {
  dir = mkdtempSync(join(tmpdir(), 'aigov-checkpoint-'))
  const file = join(dir, 'test.db')
  database = createDatabase(`sqlite:${file}`)
  const { db } = database
  expect(
    (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows[0].wal_autocheckpoint,
  ).toBe(0)
  await sql`create table filler (id integer primary key, body text not null)`.execute(db)
  // About 500 pages of 4 KiB: half the mark at which a connection would checkpoint by itself.
  for (let i = 0; i < 50; i++)
    await sql`insert into filler (body) select printf('%.4000c', 'x') from (select 1 union all select 2 union all select 3 union all select 4 union all select 5 union all select 6 union all select 7 union all select 8 union all select 9 union all select 10)`.execute(
      db,
    )
  const before = statSync(file).size
  for (const started = Date.now(); statSync(file).size < 2_000_000 && Date.now() - started < 5000; )
    await new Promise((r) => setTimeout(r, 50))
  expect(before).toBeLessThan(2_000_000)
  expect(statSync(file).size).toBeGreaterThan(2_000_000)
  await database.close()
  database = undefined
  expect(() => statSync(`${file}-wal`)).toThrow()
})

it('starts the log over under writes that never pause, so it stays near its size limit', async () => {
  dir = mkdtempSync(join(tmpdir(), 'aigov-checkpoint-'))
  const file = join(dir, 'test.db')
  database = createDatabase(`sqlite:${file}`)
  const { db } = database
  await sql`create table filler (id integer primary key, body text not null)`.execute(db)
  // Commits of about 80 KB, 1 ms apart (a busy service's write load), until 150 MB are written: a log never
  // copied to its end would hold every one of them.
  let largest = 0
  for (let written = 0; written < 150 * 1024 * 1024; written += 20 * 4096) {
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 20) insert into filler (body) select printf('%.4000c', 'x') from n`.execute(
      db,
    )
    largest = Math.max(largest, statSync(`${file}-wal`).size)
    await new Promise((r) => setTimeout(r, 1))
  }
  expect(largest).toBeLessThan(80 * 1024 * 1024)
}, 60_000)
