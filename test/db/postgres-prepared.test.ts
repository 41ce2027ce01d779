import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../../src/db/create-db.js'
import { freshDatabase, POSTGRES_URL, type TestDatabase } from '../helpers/harness.js'

// On PostgreSQL every statement with parameters runs prepared from its second run on: parsed and planned once per
// connection. What must hold: a text run once is not kept, one run again is, a connection keeps a bounded number of
// them, statements without parameters (several in one text) still run, and a prepared `select *` whose table gained
// a column (a migration by another instance) fails once, then runs again under a new name. A pool told to plan every
// run (the webhook deliveries', whose queue table fills from empty) never settles on a plan made for fewer rows.

const suite = POSTGRES_URL ? describe : describe.skip
suite(`PostgreSQL prepared statements${POSTGRES_URL ? '' : ' — skipped: DATABASE_URL does not point at PostgreSQL'}`, () => {
  let fresh: TestDatabase
  let database: Database

  beforeAll(async () => {
    fresh = await freshDatabase('postgres')
    // One connection: every statement below runs on the connection whose prepared statements are read.
    database = createDatabase(fresh.env.DATABASE_URL, { poolSize: 1 })
    await sql`create table notes (id integer primary key, body text not null)`.execute(database.db)
    await sql`insert into notes values (1, 'one'), (2, 'two')`.execute(database.db)
  })
  afterAll(async () => {
    await database?.close()
    await fresh?.drop()
  })

  const prepared = async (db: Kysely<any>) =>
    (
      await sql<{ statement: string }>`select statement from pg_prepared_statements where name like 'aigov_%'`.execute(
        db,
      )
    ).rows.map((r) => r.statement)

  it('prepares a statement with parameters on its second run, once, and leaves those without parameters alone', async () => {
    const text = 'select body from notes where id = $1 and body <> $2'
    const run = (id: number) =>
      database.db.executeQuery<{ body: string }>({
        sql: text,
        parameters: [id, 'x'],
        query: undefined as never,
        queryId: undefined as never,
      })
    expect((await run(1)).rows).toEqual([{ body: 'one' }])
    expect(await prepared(database.db)).not.toContain(text)
    expect((await run(2)).rows).toEqual([{ body: 'two' }])
    expect((await run(1)).rows).toEqual([{ body: 'one' }])
    expect((await prepared(database.db)).filter((s) => s === text)).toHaveLength(1)
    // Two statements in one text, no parameters: the simple protocol, as before.
    await sql`select 1; select 2`.execute(database.db)
    await sql`select 1; select 2`.execute(database.db)
  })

  it('prepares a select * again under a new name once its table has gained a column', async () => {
    const text = 'select * from notes where id = $1'
    const run = () =>
      database.db.executeQuery<Record<string, unknown>>({
        sql: text,
        parameters: [1],
        query: undefined as never,
        queryId: undefined as never,
      })
    await run()
    expect((await run()).rows).toEqual([{ id: 1, body: 'one' }])
    await sql`alter table notes add column tag text`.execute(database.db)
    // The statement prepared before the change fails once (PostgreSQL will not change a prepared result's columns) …
    await expect(run()).rejects.toMatchObject({ code: '0A000' })
    // … and its text is known afresh: run once unprepared, then prepared under another name.
    expect((await run()).rows).toEqual([{ id: 1, body: 'one', tag: null }])
    expect((await run()).rows).toEqual([{ id: 1, body: 'one', tag: null }])
  })

  it('keeps at most 200 prepared statements on a connection, and runs the texts past them unprepared', async () => {
    for (let round = 0; round < 2; round++) {
      // 260 texts (the number is part of each), one parameter each.
      for (let i = 0; i < 260; i++) {
        const { rows } = await sql<{ n: number }>`select ${sql.lit(i)}::int + ${round}::int as n`.execute(database.db)
        expect(rows[0].n).toBe(i + round)
      }
    }
    expect((await prepared(database.db)).length).toBe(200)
  })

  it('plans every run of a prepared statement on a pool told to, where another pool settles on one plan', async () => {
    const text = 'update notes set body = body where id = $1'
    const plans = async (db: Kysely<any>) =>
      (
        await sql<{
          generic_plans: number
          custom_plans: number
        }>`select generic_plans, custom_plans from pg_prepared_statements where statement = ${text}`.execute(db)
      ).rows[0]
    // Pools of their own: the connection above holds as many prepared statements as it may by now.
    const settled = createDatabase(fresh.env.DATABASE_URL, { poolSize: 1 })
    const queue = createDatabase(fresh.env.DATABASE_URL, { poolSize: 1, planEveryRun: true })
    try {
      for (const db of [settled.db, queue.db]) {
        for (let i = 0; i < 12; i++)
          await db.executeQuery({ sql: text, parameters: [1], query: undefined as never, queryId: undefined as never })
      }
      // PostgreSQL's own choice: custom plans for the first five runs, then the generic one, made once and kept.
      expect(await plans(settled.db)).toEqual({ generic_plans: 6, custom_plans: 5 })
      // Each pool names its own statements: prepared from the second run on here too, and planned anew every run.
      expect(await plans(queue.db)).toEqual({ generic_plans: 0, custom_plans: 11 })
    } finally {
      await settled.close()
      await queue.close()
    }
  })
})
