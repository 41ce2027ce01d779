import { type Kysely, PostgresIntrospector, sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CurrentSchemaIntrospector } from '../../src/db/current-schema-introspector.js'
import { POSTGRES_URL, startTestApp, type TestApp } from '../helpers/harness.js'

const maybe = POSTGRES_URL ? describe : describe.skip
/** PostgreSQL's "schema … does not exist". */
const INVALID_SCHEMA_NAME = '3F000'

maybe(
  `migrations beside other schemas that come and go${POSTGRES_URL ? '' : ' — skipped: DATABASE_URL does not point at PostgreSQL'}`,
  () => {
    let t: TestApp
    beforeAll(async () => {
      t = await startTestApp('postgres')
    })
    afterAll(async () => t?.close())

    it('migrates while other schemas of the database are created and dropped (as other environments or test runs do)', async () => {
      const churner = new pg.Client({ connectionString: POSTGRES_URL })
      await churner.connect()
      let churning = true
      let dropped = 0
      // Other schemas, each with tables of serial columns, dropped as soon as made.
      const churn = (async () => {
        while (churning) {
          const schema = `churn_${process.pid}_${dropped}`
          await churner.query(
            `create schema ${schema}; ${Array.from({ length: 20 }, (_, i) => `create table ${schema}.t${i} (id serial primary key, a int, b text, c text)`).join('; ')}`,
          )
          await churner.query(`drop schema ${schema} cascade`)
          dropped++
        }
      })()
      try {
        // Until many schemas have come and gone while it ran.
        for (let i = 0; i < 40 || dropped < 20; i++) expect(await t.migrate()).toEqual([])
      } finally {
        churning = false
        await churn
        await churner.end()
      }
    })

    /**
     * Kysely's introspector reads every schema's tables, and fails when one is dropped while it reads (other test files
     * drop theirs as they end: the failure ours avoids); it is asked again then.
     */
    const kyselyTables = async (db: Kysely<any>, withInternalKyselyTables: boolean) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await new PostgresIntrospector(db).getTables({ withInternalKyselyTables })
        } catch (err) {
          if ((err as { code?: string }).code !== INVALID_SCHEMA_NAME || attempt === 5) throw err
        }
      }
    }

    it("describes the current schema's tables as Kysely's own introspector does, and no other schema's", async () => {
      const { db } = t.deps.database
      const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0].s
      for (const withInternalKyselyTables of [false, true]) {
        const ours = await new CurrentSchemaIntrospector(db).getTables({ withInternalKyselyTables })
        const kysely = (await kyselyTables(db, withInternalKyselyTables)).filter((table) => table.schema === schema)
        expect(ours.length).toBeGreaterThan(30)
        expect(ours.some((table) => table.name === 'kysely_migration')).toBe(withInternalKyselyTables)
        expect(ours).toEqual(kysely)
      }
    })
  },
)
