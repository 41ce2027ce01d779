import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
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
  // Bundles spool here while this suite runs: whatever answers a request (a replay, a refusal) leaves nothing behind
  // once its response is done (the spool is removed on response, which may end just after the answer arrives).
  const outerTmp = process.env.TMPDIR
  const spools = mkdtempSync(join(tmpdir(), 'bundle-requests-'))
  const noSpoolLeft = () =>
    vi.waitFor(() => expect(readdirSync(spools).filter((n) => n.startsWith('aigov-bundle-'))).toEqual([]), {
      timeout: 2000,
    })

  beforeAll(async () => {
    process.env.TMPDIR = spools
    t = await startTestApp(dialect, { SERVICE_STARTER_LIBRARY: 'true' })
    admin = t.as('bundles', 'admin')
    await admin({ method: 'POST', url: '/users', payload: { email: 'known@example.com', name: 'Known' } })
  })
  afterAll(async () => {
    await t?.close()
    if (outerTmp === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = outerTmp
    rmSync(spools, { recursive: true, force: true })
  })

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
        await noSpoolLeft()

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

  describe('references of the records', () => {
    it('plans a bundle naming each reference its records make to nothing (as the document plan does), and applies nothing', async () => {
      const bundle = await archive([
        ['configuration.yaml', 'apiVersion: aigov/v1\nusers: [{ email: new@example.com, name: New }]\n'],
        [
          'records/vendors/000001.ndjson',
          vendor('Vendor ok', { owner: { email: 'known@example.com' } }) +
            vendor('Vendor of a new user', { owner: { email: 'NEW@example.com' } }) +
            vendor('Vendor of nobody', { owner: { email: 'nobody@example.com' } }) +
            vendor('Vendor of no team', { owner: { team: 'Ghost team' }, custom_fields: { 'No such field': 'x' } }),
        ],
        ['records/models/000001.ndjson', model('Model', { vendors: ['Vendor ok', 'Ghost vendor'] })],
        [
          'records/use_cases/000001.ndjson',
          useCase('Use case', {
            owner: { email: 'nobody@example.com' },
            models: ['Model', 'Ghost model'],
            questionnaires: [
              {
                questionnaire: 'AI-USE-CASE-INTAKE+1',
                answers: [
                  { question_id: 'business_purpose', section_id: 'purpose', value: 'x', evidence: ['f00 Missing'] },
                ],
              },
              { questionnaire: 'NO-SUCH-QUESTIONNAIRE+1', answers: [] },
            ],
            policy_packs: [
              { pack: 'NIST-AI-RMF', due_date: null },
              { pack: 'NO-SUCH-PACK+2', due_date: null },
            ],
          }),
        ],
      ])
      const before = await tenantCounts(t.deps.database, 'bundles')
      const plan = await admin({ method: 'POST', url: '/configuration/plan', payload: bundle, headers: tarType })
      expect(plan.statusCode, plan.body).toBe(422)
      expect(plan.headers['content-type']).toContain('application/problem+json')
      const body = plan.json()
      expect(body.code).toBe('validation_failed')
      // Each unresolved key once, where it first appears: nobody@example.com owns a vendor and the use case.
      expect(body.errors.map((e: { field: string; message: string }) => `${e.field} ${e.message}`)).toEqual([
        'records/vendors/000001.ndjson:3 /owner no user nobody@example.com in the document or the tenant',
        'records/vendors/000001.ndjson:4 /owner no team "Ghost team" in the document or the tenant',
        'records/vendors/000001.ndjson:4 /custom_fields/No such field no custom field "No such field" in the document or the tenant',
        'records/models/000001.ndjson:1 /vendors/1 no vendor "Ghost vendor" in the bundle or the tenant',
        'records/use_cases/000001.ndjson:1 /models/1 no model "Ghost model" in the bundle or the tenant',
        'records/use_cases/000001.ndjson:1 /questionnaires/0/answers/0/evidence/0 no evidence "f00 Missing" in the bundle or the tenant',
        'records/use_cases/000001.ndjson:1 /questionnaires/1/questionnaire no questionnaire NO-SUCH-QUESTIONNAIRE+1 in the document or the tenant',
        'records/use_cases/000001.ndjson:1 /policy_packs/1/pack no policy pack NO-SUCH-PACK+2 in the document or the tenant',
      ])
      expect(body.errors[0]).toEqual({
        field: 'records/vendors/000001.ndjson:3 /owner',
        pointer: '/owner',
        message: 'no user nobody@example.com in the document or the tenant',
        file: 'records/vendors/000001.ndjson',
        line: 3,
      })
      expect(body.detail).toMatch(/^the bundle's records have 8 unresolved references: /)

      const apply = await admin({ method: 'POST', url: '/configuration/apply', payload: bundle, headers: tarType })
      expect(apply.statusCode, apply.body).toBe(422)
      expect(apply.json().errors).toEqual(body.errors)
      expect(await tenantCounts(t.deps.database, 'bundles')).toEqual(before)
      await noSpoolLeft()
    })

    it('resolves references against the document and the bundle before the tenant, and plans the rest', async () => {
      const bundle = await archive([
        [
          'configuration.yaml',
          'apiVersion: aigov/v1\nusers: [{ email: planned@example.com, name: Planned }]\nteams: [{ name: Planned team }]\n',
        ],
        [
          'records/vendors/000001.ndjson',
          vendor('Planned vendor', { owner: { team: 'planned TEAM' } }) +
            vendor('Known vendor', { owner: { email: 'known@example.com' } }),
        ],
        ['records/models/000001.ndjson', model('Planned model', { vendors: ['Planned vendor'] })],
        [
          'records/use_cases/000001.ndjson',
          useCase('Planned use case', {
            owner: { email: 'Planned@example.com' },
            models: ['Planned model'],
            vendors: ['Known vendor'],
            questionnaires: [{ questionnaire: 'AI-USE-CASE-INTAKE+1', answers: [] }],
            policy_packs: [{ pack: 'NIST-AI-RMF', due_date: null }],
          }),
        ],
      ])
      const plan = await admin({ method: 'POST', url: '/configuration/plan', payload: bundle, headers: tarType })
      expect(plan.statusCode, plan.body).toBe(200)
      expect(plan.json().records.summary).toMatchObject({ create: 4, update: 0 })
      const apply = await admin({
        method: 'POST',
        url: `/configuration/apply?plan_id=${plan.json().plan_id}`,
        payload: bundle,
        headers: tarType,
      })
      expect(apply.statusCode, apply.body).toBe(200)
    })
  })
})
