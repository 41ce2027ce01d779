import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { archive, tenantCounts } from '../../helpers/bundles.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

type Call = ReturnType<TestApp['as']>
const tarType = { 'content-type': 'application/x-tar' }
const doc = (riskType: string) => `apiVersion: aigov/v1\nrisk_types: [{ name: ${riskType} }]\n`
const line = (record: object) => `${JSON.stringify(record)}\n`
const vendor = (name: string, extra: object = {}) =>
  line({ name, description: null, website: null, status: 'active', owner: null, custom_fields: {}, ...extra })
const model = (name: string, extra: object = {}) =>
  line({
    name,
    summary: null,
    source: null,
    status: 'active',
    provider: null,
    model_type: null,
    version: null,
    owner: null,
    custom_fields: {},
    vendors: [],
    ...extra,
  })
const useCase = (name: string, extra: object = {}) =>
  line({
    name,
    description: null,
    ai_type: null,
    system_type: null,
    risk_category_level: null,
    regions: [],
    industries: [],
    source: null,
    owner: null,
    custom_fields: {},
    models: [],
    vendors: [],
    questionnaires: [],
    policy_packs: [],
    controls: [],
    ...extra,
  })
/** The problem a reused Idempotency-Key answers, without what differs per request. */
const problem = (body: string) => {
  const { instance: _i, request_id: _r, ...rest } = JSON.parse(body)
  return rest
}

describeEachDialect('configuration bundle requests', (dialect) => {
  let t: TestApp
  let admin: Call

  beforeAll(async () => {
    t = await startTestApp(dialect, { SERVICE_STARTER_LIBRARY: 'true' })
    admin = t.as('bundles', 'admin')
    await admin({ method: 'POST', url: '/users', payload: { email: 'known@example.com', name: 'Known' } })
  })
  afterAll(async () => t?.close())

  describe('Idempotency-Key', () => {
    it('replays the answer to the same key with the same bundle, and refuses it with another bundle as for JSON', async () => {
      const first = await archive([['configuration.yaml', doc('Idempotent A')]])
      const other = await archive([['configuration.yaml', doc('Idempotent B')]])
      const send = (url: string, key: string, payload: Buffer) =>
        admin({ method: 'POST', url, payload, headers: { ...tarType, 'idempotency-key': key } })

      for (const url of ['/configuration/plan', '/configuration/apply']) {
        const key = `bundle-${url.slice(15)}`
        const answer = await send(url, key, first)
        expect(answer.statusCode, answer.body).toBe(200)
        expect(answer.headers['idempotent-replayed']).toBeUndefined()
        const before = await tenantCounts(t.deps.database, 'bundles')

        const replay = await send(url, key, first)
        expect(replay.statusCode).toBe(200)
        expect(replay.headers['idempotent-replayed']).toBe('true')
        expect(replay.body).toBe(answer.body)

        const reused = await send(url, key, other)
        expect(reused.statusCode, reused.body).toBe(422)
        expect(reused.headers['idempotent-replayed']).toBeUndefined()
        expect(await tenantCounts(t.deps.database, 'bundles')).toEqual(before)

        // The plugin's answer to a JSON body sent again with other content under one key, exactly.
        const jsonKey = `json-${url.slice(15)}`
        const json = (name: string) =>
          admin({
            method: 'POST',
            url,
            payload: { apiVersion: 'aigov/v1', risk_types: [{ name }] },
            headers: { 'idempotency-key': jsonKey },
          })
        expect((await json('Idempotent A')).statusCode).toBe(200)
        const jsonReused = await json('Idempotent C')
        expect(jsonReused.statusCode).toBe(422)
        expect(reused.headers['content-type']).toBe(jsonReused.headers['content-type'])
        expect(problem(reused.body)).toEqual(problem(jsonReused.body))
      }
      const names = (await admin({ method: 'GET', url: '/risk_types?page_limit=100' }))
        .json()
        .items.map((r: { name: string }) => r.name)
      expect(names).toContain('Idempotent A')
      expect(names).not.toContain('Idempotent B')
      expect(names).not.toContain('Idempotent C')
    })
  })
})
