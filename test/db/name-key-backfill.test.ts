import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nameKey as frozenNameKey } from '../../src/db/migrations/2026-11-23T17-name-key-backfill.js'
import { nameKey } from '../../src/shared/search.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

const MIGRATION = '2026-11-23T17-name-key-backfill'
/** How name_key was computed before names compared by NFKC without invisible characters. */
const oldKey = (name: string) => name.normalize('NFC').trim().toLowerCase()

describeEachDialect('name_key backfill migration', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  /** Runs the backfill again, as on a database whose rows predate it; returns the warnings it reported. */
  const backfill = async () => {
    await sql`delete from kysely_migration where name = ${MIGRATION}`.execute(t.deps.database.db)
    const warnings: Error[] = []
    const onWarning = (w: Error) => warnings.push(w)
    process.on('warning', onWarning)
    try {
      expect(await t.migrate()).toEqual([MIGRATION])
      await new Promise((resolve) => setImmediate(resolve)) // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning)
    }
    return warnings
      .filter((w) => (w as Error & { code?: string }).code === 'AIGOV_NAME_KEY_COLLISION')
      .map((w) => w.message)
  }

  it("recomputes every family's name_key; of names that now collide the oldest keeps the key, the others get it suffixed; nothing fails", async () => {
    const { db } = t.deps.database
    const create = async (url: string, payload: object, tenant = 'acme') => {
      const res = await t.as(tenant, 'admin')({ method: 'POST', url, payload })
      expect(res.statusCode, res.body).toBe(201)
      return res.json().id as string
    }
    // Records made through the API, then given the names and keys that rows made before the change have.
    const oldRow = async (
      table: 'use_cases' | 'teams' | 'models' | 'users' | 'custom_fields',
      id: string,
      name: string,
    ) => {
      await db
        .updateTable(table)
        .set({ name, name_key: oldKey(name) })
        .where('id', '=', id)
        .execute()
    }
    const keyOf = async (table: 'use_cases' | 'teams' | 'models' | 'users' | 'custom_fields', id: string) =>
      (await db.selectFrom(table).select('name_key').where('id', '=', id).executeTakeFirstOrThrow()).name_key

    const [fullWidth, plain, invisible, elsewhere] = [
      await create('/use_cases', { name: 'a' }),
      await create('/use_cases', { name: 'b' }),
      await create('/use_cases', { name: 'c' }),
      await create('/use_cases', { name: 'a' }, 'globex'),
    ]
    await oldRow('use_cases', fullWidth, 'ｄｕｐ') // the oldest: its key changes to "dup"
    await oldRow('use_cases', plain, 'dup') // already "dup", unchanged by the rule, but younger
    await oldRow('use_cases', invisible, 'Dup\u200b')
    await oldRow('use_cases', elsewhere, 'ｄｕｐ') // another tenant: no collision
    const [riskTeam, wideTeam] = [await create('/teams', { name: 'a' }), await create('/teams', { name: 'b' })]
    await oldRow('teams', riskTeam, 'Risk') // the oldest keeps its unchanged key
    await oldRow('teams', wideTeam, 'Ｒｉｓｋ')
    const model = await create('/models', { name: 'a' })
    await oldRow('models', model, 'Ｍｏｄｅｌ\u00ad Ａ')
    const field = await create('/custom_fields', { name: 'a' })
    await oldRow('custom_fields', field, 'Ｃｏｓｔ')
    // Users' names need not be unique: two may share a key.
    const [ada, ada2] = [
      await create('/users', { email: 'ada@example.com' }),
      await create('/users', { email: 'ada2@example.com' }),
    ]
    await oldRow('users', ada, 'Ａｄａ')
    await oldRow('users', ada2, 'ada\u200d')

    const warnings = await backfill()

    expect(await keyOf('use_cases', fullWidth)).toBe('dup')
    expect(await keyOf('use_cases', plain)).toBe(`dup\u200b#${plain}`)
    expect(await keyOf('use_cases', invisible)).toBe(`dup\u200b#${invisible}`)
    expect(await keyOf('use_cases', elsewhere)).toBe('dup')
    expect(await keyOf('teams', riskTeam)).toBe('risk')
    expect(await keyOf('teams', wideTeam)).toBe(`risk\u200b#${wideTeam}`)
    expect(await keyOf('models', model)).toBe('model a')
    expect(await keyOf('custom_fields', field)).toBe('cost')
    expect([await keyOf('users', ada), await keyOf('users', ada2)]).toEqual(['ada', 'ada'])
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toMatch(new RegExp(`^use_cases: tenant acme .*${fullWidth} keeps .*${plain}, ${invisible}`))
    expect(warnings[1]).toMatch(new RegExp(`^teams: tenant acme .*${riskTeam} keeps .*${wideTeam}`))

    // The service now sees what the rule says: the oldest is the one a new duplicate collides with.
    const write = t.as('acme', 'write')
    const dup = await write({ method: 'POST', url: '/use_cases', payload: { name: 'DUP' } })
    expect(dup.statusCode).toBe(422)
    expect(dup.json()).toMatchObject({ code: 'already_exists', existing_id: fullWidth })
    expect(
      (await t.as('acme', 'admin')({ method: 'POST', url: '/teams', payload: { name: 'risk' } })).json(),
    ).toMatchObject({ existing_id: riskTeam })
    expect(
      (await write({ method: 'GET', url: '/use_cases?q=dup' })).json().items.map((u: { id: string }) => u.id),
    ).toEqual([fullWidth, plain, invisible])
    expect(
      (await write({ method: 'GET', url: '/models?q=model%20a' })).json().items.map((m: { id: string }) => m.id),
    ).toEqual([model])
    // A suffixed record renamed gets a plain key.
    expect(
      (await write({ method: 'PATCH', url: `/use_cases/${plain}`, payload: { name: 'dup two' } })).statusCode,
    ).toBe(200)
    expect(await keyOf('use_cases', plain)).toBe('dup two')

    // Running it again changes nothing.
    await backfill()
    expect(await keyOf('use_cases', fullWidth)).toBe('dup')
    expect(await keyOf('use_cases', invisible)).toBe(`dup\u200b#${invisible}`)
    expect(await keyOf('teams', wideTeam)).toBe(`risk\u200b#${wideTeam}`)
  })
})

it('the migration computes keys as the service does today', () => {
  for (const name of [
    'ｄｕｐ',
    'Dup\u200b',
    ' Mixed Case ',
    'ﬁle',
    'Ⅻ',
    'e\u0301',
    'soft\u00adhyphen',
    '\ufeffbom',
    'İstanbul',
    'straße',
  ]) {
    expect(frozenNameKey(name), name).toBe(nameKey(name))
  }
})
