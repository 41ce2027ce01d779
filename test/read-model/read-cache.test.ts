import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readsOfTurn, sharedReads } from '../../src/read-model/read-cache.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

describeEachDialect('ETags and the read cache', (dialect) => {
  let t: TestApp
  let other: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
    // A second instance on the same database, with its own cache.
    other = await startTestApp(dialect, { DATABASE_URL: t.config.databaseUrl })
  })
  afterAll(async () => {
    await other?.close()
    await t?.close()
  })

  const create = async (name: string, tenant = 'acme') => {
    const res = await t.as(tenant, 'write')({ method: 'POST', url: '/use_cases', payload: { name } })
    expect(res.statusCode).toBe(201)
    return res.json().id as string
  }

  it('reads the head as committed while a write transaction is open (never its uncommitted changes)', async () => {
    await create('Head under a transaction')
    const committed = (await t.as('acme', 'read')({ method: 'GET', url: '/use_cases' })).headers.etag as string
    const { db } = t.deps.database
    const begin = dialect === 'sqlite' ? sql`begin immediate` : sql`begin`
    let during: Promise<{ headers: Record<string, unknown> }> | undefined
    await db.connection().execute(async (tx) => {
      await begin.execute(tx)
      await tx.updateTable('tenants').set({ audit_seq: sql`audit_seq + 1000` }).where('id', '=', 'acme').execute()
      // The GET reaches the read cache while the transaction holds the moved head; then the transaction rolls back.
      during = t.as('acme', 'read')({ method: 'GET', url: '/use_cases' })
      await new Promise((resolve) => setTimeout(resolve, 100))
      await sql`rollback`.execute(tx)
    })
    expect((await during!).headers.etag).toBe(committed)
  })

  it('answers a repeated GET with the same ETag and body, and 304 to If-None-Match', async () => {
    await create('Cached one')
    const first = await t.as('acme', 'read')({ method: 'GET', url: '/use_cases' })
    const second = await t.as('acme', 'read')({ method: 'GET', url: '/use_cases' })
    expect(first.statusCode).toBe(200)
    expect(first.headers.etag).toMatch(/^"\d+-[0-9a-f]{16}"$/)
    expect(first.headers['cache-control']).toBe('private, no-cache')
    expect(second.headers.etag).toBe(first.headers.etag)
    expect(second.body).toBe(first.body)
    expect(second.headers['content-type']).toBe(first.headers['content-type'])
    expect(second.headers['ratelimit-remaining']).toBeDefined()

    const notModified = await t.as(
      'acme',
      'read',
    )({ method: 'GET', url: '/use_cases', headers: { 'if-none-match': `"nope", W/${first.headers.etag}` } })
    expect(notModified.statusCode).toBe(304)
    expect(notModified.body).toBe('')
    expect(notModified.headers.etag).toBe(first.headers.etag)
  })

  it('answers from memory until a write could change the answer: a change made behind the service shows after one', async () => {
    const id = await create('Renamed behind the back')
    const url = `/use_cases/${id}`
    expect((await t.as('acme', 'read')({ method: 'GET', url })).json().name).toBe('Renamed behind the back')
    await sql`update use_cases set name = 'Changed in the database' where id = ${id}`.execute(t.deps.database.db)
    expect((await t.as('acme', 'read')({ method: 'GET', url })).json().name).toBe('Renamed behind the back')
    // Another record's write: this record's rendering is kept (ItemCache).
    await create('Another record of the tenant')
    expect((await t.as('acme', 'read')({ method: 'GET', url })).json().name).toBe('Renamed behind the back')
    // A write of what records show (a team could own it): every kept rendering of the tenant is dropped.
    expect(
      (await t.as('acme', 'write')({ method: 'POST', url: '/teams', payload: { name: 'Any team' } })).statusCode,
    ).toBe(201)
    expect((await t.as('acme', 'read')({ method: 'GET', url })).json().name).toBe('Changed in the database')
  })

  it('never answers with data older than the last write, on this instance or another', async () => {
    const before = await other.as('acme', 'read')({ method: 'GET', url: '/use_cases?page_limit=100' })
    const id = await create('Written on the first instance')
    for (const instance of [t, other]) {
      const after = await instance.as(
        'acme',
        'read',
      )({ method: 'GET', url: '/use_cases?page_limit=100', headers: { 'if-none-match': String(before.headers.etag) } })
      expect(after.statusCode).toBe(200)
      expect(after.headers.etag).not.toBe(before.headers.etag)
      expect(after.json().items.map((u: { id: string }) => u.id)).toContain(id)
    }
    const patched = await other.as(
      'acme',
      'write',
    )({ method: 'PATCH', url: `/use_cases/${id}`, payload: { description: 'new description' } })
    expect(patched.statusCode).toBe(200)
    expect((await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${id}` })).json().description).toBe(
      'new description',
    )
    expect((await t.as('acme', 'write')({ method: 'DELETE', url: `/use_cases/${id}` })).statusCode).toBe(204)
    expect((await other.as('acme', 'read')({ method: 'GET', url: `/use_cases/${id}` })).statusCode).toBe(404)
  })

  it('keeps tenants apart: the same URL gives each tenant its own records and ETag', async () => {
    await create('Only in globex', 'globex')
    const acme = await t.as('acme', 'read')({ method: 'GET', url: '/use_cases?q=globex' })
    const globex = await t.as('globex', 'read')({ method: 'GET', url: '/use_cases?q=globex' })
    expect(acme.json().items).toEqual([])
    expect(globex.json().items.map((u: { name: string }) => u.name)).toEqual(['Only in globex'])
    expect(globex.headers.etag).not.toBe(acme.headers.etag)
    const crossed = await t.as(
      'globex',
      'read',
    )({ method: 'GET', url: '/use_cases?q=globex', headers: { 'if-none-match': String(acme.headers.etag) } })
    expect(crossed.statusCode).toBe(200)
    // Asked at once (on SQLite their heads are read together), each still gets its own tenant's answer.
    const together = await Promise.all(
      [...Array(6)].map((_, i) =>
        t.as(i % 2 ? 'globex' : 'acme', 'read')({ method: 'GET', url: '/use_cases?q=globex' }),
      ),
    )
    for (const [i, res] of together.entries())
      expect(res.headers.etag, String(i)).toBe(i % 2 ? globex.headers.etag : acme.headers.etag)
  })

  it('gives no ETag to errors and caches none', async () => {
    const missing = await t.as('acme', 'read')({ method: 'GET', url: '/use_cases/uc_01jd3k8m9v4q2w6e8r0t2y4u6i' })
    expect(missing.statusCode).toBe(404)
    expect(missing.headers.etag).toBeUndefined()
    const bad = await t.as('acme', 'read')({ method: 'GET', url: '/use_cases?page_after=garbage' })
    expect(bad.statusCode).toBe(400)
  })

  it('still checks the role before answering from the cache', async () => {
    const stages = await t.as('acme', 'read')({ method: 'GET', url: '/workflow_stages' })
    expect(stages.statusCode).toBe(200)
    const unauthenticated = await t.app.inject({ method: 'GET', url: '/api/v1/integration/workflow_stages' })
    expect(unauthenticated.statusCode).toBe(401)
  })

  it('reads the audit chain afresh on verify, even after a change made behind the service', async () => {
    expect((await t.as('acme', 'read')({ method: 'GET', url: '/audit_logs/verify' })).json().ok).toBe(true)
    const victim = await t.deps.database.db
      .selectFrom('audit_logs')
      .select('id')
      .where('tenant_id', '=', 'acme')
      .orderBy('seq')
      .executeTakeFirstOrThrow()
    await sql`update audit_logs set resource_name = 'tampered' where id = ${victim.id}`.execute(t.deps.database.db)
    const verified = await t.as('acme', 'read')({ method: 'GET', url: '/audit_logs/verify' })
    expect(verified.json()).toMatchObject({ ok: false, first_bad_id: victim.id })
    expect(verified.headers.etag).toBeUndefined()
  })

  it('keeps ETags and 304s with the cache turned off (SERVICE_READ_CACHE_MB=0)', async () => {
    const uncached = await startTestApp(dialect, { DATABASE_URL: t.config.databaseUrl, SERVICE_READ_CACHE_MB: '0' })
    try {
      const first = await uncached.as('acme', 'read')({ method: 'GET', url: '/models' })
      expect(first.statusCode).toBe(200)
      expect(first.headers.etag).toBeDefined()
      const again = await uncached.as(
        'acme',
        'read',
      )({ method: 'GET', url: '/models', headers: { 'if-none-match': String(first.headers.etag) } })
      expect(again.statusCode).toBe(304)
    } finally {
      await uncached.close()
    }
  })
})

describe('shared reads of the chain head', () => {
  /** A read of several keys that answers when told to (each key with its name and the given state), numbered in the order reads began. */
  function controlledReads() {
    const begun: { keys: string[]; answer: (state: string) => void; fail: (e: Error) => void }[] = []
    const read = (keys: string[]) =>
      new Promise<Map<string, string>>((answer, fail) =>
        begun.push({ keys, answer: (state) => answer(new Map(keys.map((k) => [k, `${k} ${state}`]))), fail }),
      )
    return { begun, read: sharedReads(read) }
  }
  const settle = () => new Promise((r) => setImmediate(r))

  it('never answers a request with a read that began before it arrived, and shares the next one', async () => {
    const { begun, read } = controlledReads()
    const first = read('acme')
    const second = read('acme')
    const third = read('acme')
    expect(begun).toHaveLength(1)
    begun[0].answer('state 1')
    expect(await first).toBe('acme state 1')
    await settle()
    expect(begun.map((b) => b.keys)).toEqual([['acme'], ['acme']])
    const fourth = read('acme')
    begun[1].answer('state 2')
    expect([await second, await third]).toEqual(['acme state 2', 'acme state 2'])
    await settle()
    expect(begun).toHaveLength(3)
    begun[2].answer('state 3')
    expect(await fourth).toBe('acme state 3')
  })

  it('reads the keys of everyone who arrived during a read in one read, and a failed read fails only its own requests', async () => {
    const { begun, read } = controlledReads()
    const acme = read('acme')
    const globex = read('globex')
    const initech = read('initech')
    const acmeAgain = read('acme')
    expect(begun.map((b) => b.keys)).toEqual([['acme']])
    begun[0].fail(new Error('connection lost'))
    await expect(acme).rejects.toThrow('connection lost')
    await settle()
    expect(begun.map((b) => b.keys)).toEqual([['acme'], ['globex', 'initech', 'acme']])
    begun[1].answer('after the failure')
    expect([await globex, await initech, await acmeAgain]).toEqual([
      'globex after the failure',
      'initech after the failure',
      'acme after the failure',
    ])
    await settle()
    const later = read('globex')
    expect(begun).toHaveLength(3)
    begun[2].answer('fresh')
    expect(await later).toBe('globex fresh')
  })

  it('reads the keys asked in one turn of the event loop in one read, after all of them asked', async () => {
    const reads: string[][] = []
    const readNow = readsOfTurn(
      (keys: string[]) => (
        reads.push(keys), keys.filter((k) => k !== 'gone').map((id) => ({ id, state: reads.length }))
      ),
    )
    const ask = (key: string) =>
      new Promise((resolve, reject) => readNow(key, (err, row) => (err ? reject(err) : resolve(row?.state))))
    const first = [ask('acme'), ask('globex'), ask('acme'), ask('gone')]
    expect(reads).toEqual([])
    expect(await Promise.all(first)).toEqual([1, 1, 1, undefined])
    expect(reads).toEqual([['acme', 'globex', 'gone']])
    expect(await ask('acme')).toBe(2)
    expect(reads).toHaveLength(2)
  })

  it('fails every asker of a turn whose read fails, and reads afresh in the next; answers undefined when the read cannot run', async () => {
    let outcome: 'fail' | 'busy' | 'read' = 'fail'
    const readsOfTurnFailing = readsOfTurn((keys: string[]) => {
      if (outcome === 'fail') throw new Error('disk I/O error')
      return outcome === 'busy' ? undefined : keys.map((id) => ({ id }))
    })
    const ask = (key: string) =>
      new Promise((resolve, reject) => readsOfTurnFailing(key, (err, row) => (err ? reject(err) : resolve(row?.id))))
    const failed = [ask('acme'), ask('globex')]
    for (const asked of failed) await expect(asked).rejects.toThrow('disk I/O error')
    outcome = 'busy'
    expect(await ask('acme')).toBeUndefined()
    outcome = 'read'
    expect(await Promise.all([ask('acme'), ask('globex')])).toEqual(['acme', 'globex'])
  })

  it('answers undefined for a key the read did not find', async () => {
    const read = sharedReads(async (keys: string[]) => new Map(keys.filter((k) => k !== 'gone').map((k) => [k, k])))
    expect(await Promise.all([read('acme'), read('gone')])).toEqual(['acme', undefined])
  })
})
