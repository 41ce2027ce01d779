import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DialectName } from '../../src/db/create-db.js'
import { describeEachDialect, REDIS_URL, startTestApp, type TestApp } from '../helpers/harness.js'

function idempotencySuite(dialect: DialectName, env: Record<string, string>) {
  let t: TestApp
  let write: ReturnType<TestApp['as']>
  const tenant = `idem-${Date.now().toString(36)}`
  beforeAll(async () => {
    t = await startTestApp(dialect, env)
    write = t.as(tenant, 'write')
  })
  afterAll(async () => t.close())

  const count = async () => (await write({ method: 'GET', url: '/use_cases?page_limit=100' })).json().items.length
  const post = (key: string, payload: object) =>
    write({ method: 'POST', url: '/use_cases', headers: { 'idempotency-key': key }, payload })

  it('replays the first response to a retry and creates nothing', async () => {
    const first = await post('key-1', { name: 'Idempotent', description: 'a' })
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const before = await count()
    const retry = await post('key-1', { description: 'a', name: 'Idempotent' })
    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json()).toEqual(first.json())
    expect(retry.headers.location).toBe(first.headers.location)
    expect(await count()).toBe(before)
  })

  it('refuses the same key with another body (422) and changes nothing', async () => {
    const before = await count()
    const res = await post('key-1', { name: 'Something else' })
    expect(res.statusCode).toBe(422)
    expect(await count()).toBe(before)
  })

  it('does not keep failed responses: a corrected retry with the same key goes through', async () => {
    expect((await post('key-2', { name: '' })).statusCode).toBe(422)
    const dup = await post('key-3', { name: 'idempotent' })
    expect(dup.statusCode).toBe(422)
    const ok = await post('key-3', { name: 'idempotent' })
    expect(ok.statusCode).toBe(422)
    expect((await post('key-2', { name: 'Fixed' })).statusCode).toBe(201)
  })

  it('creates once when concurrent requests carry the same key', async () => {
    const before = await count()
    const results = await Promise.all(Array.from({ length: 8 }, () => post('key-concurrent', { name: 'Concurrent' })))
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(201))
    expect(new Set(results.map((r) => r.json().id)).size).toBe(1)
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(7)
    expect(await count()).toBe(before + 1)
    const audit = (await write({ method: 'GET', url: `/audit_logs?resource_id=${results[0].json().id}` })).json().items
    expect(audit).toHaveLength(1)
  })

  it('scopes keys to the API key, and rejects malformed keys', async () => {
    const other = t.as(tenant, 'admin')
    const res = await other({
      method: 'POST',
      url: '/use_cases',
      headers: { 'idempotency-key': 'key-1' },
      payload: { name: 'Other caller' },
    })
    expect(res.statusCode).toBe(201)
    expect(res.headers['idempotent-replayed']).toBeUndefined()
    expect((await post('x'.repeat(256), { name: 'Too long key' })).statusCode).toBe(400)
    expect((await post('has space', { name: 'Bad key' })).statusCode).toBe(400)
  })
}

describeEachDialect('Idempotency-Key (records in the database)', (dialect) => idempotencySuite(dialect, {}))

describe.skipIf(!REDIS_URL)(
  `Idempotency-Key (records in Redis)${REDIS_URL ? '' : ' — skipped: REDIS_URL is not set'}`,
  () => {
    idempotencySuite('sqlite', { REDIS_URL: REDIS_URL ?? '' })
  },
)
