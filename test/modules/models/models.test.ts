import { afterAll, beforeAll, expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { namedRecordTests } from '../../helpers/named-records.js'

describeEachDialect('models: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/models',
    resourceType: 'model',
    idPrefix: 'mdl',
    validBody: (i) => ({ name: `Model ${i}`, summary: 'contract test', status: 'in_development' }),
    updateBody: { status: 'in_production' },
    deletable: true,
  })
})

describeEachDialect('models: names', (dialect) => namedRecordTests(dialect, { collection: '/models' }))

describeEachDialect('models: fields', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  it('creates with defaults, rejects unknown enum values with 422, and filters by status', async () => {
    const write = t.as('acme', 'write')
    const plain = await write({ method: 'POST', url: '/models', payload: { name: 'Plain', summary: null } })
    expect(plain.statusCode).toBe(201)
    expect(plain.json()).toMatchObject({
      name: 'Plain',
      status: 'none',
      summary: null,
      provider: null,
      model_type: null,
      version: null,
      source: null,
    })
    const bad = await write({ method: 'POST', url: '/models', payload: { name: 'Bad', status: 'deployed' } })
    expect(bad.statusCode).toBe(422)
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toContain('status')
    await write({ method: 'POST', url: '/models', payload: { name: 'Live', status: 'in_production' } })
    const live = await t.as('acme', 'read')({ method: 'GET', url: '/models?status=in_production' })
    expect(live.json().items.map((m: { name: string }) => m.name)).toEqual(['Live'])
    expect((await t.as('acme', 'read')({ method: 'GET', url: '/models?status=deployed' })).statusCode).toBe(400)
  })

  it('PATCH: null clears (status back to none), absent fields stay, changes are audited as [before, after]', async () => {
    const write = t.as('acme', 'write')
    const m = (
      await write({
        method: 'POST',
        url: '/models',
        payload: { name: 'Patchy', provider: 'openai', version: '1', status: 'retired' },
      })
    ).json()
    const res = await write({
      method: 'PATCH',
      url: `/models/${m.id}`,
      payload: { provider: null, status: null, model_type: 'llm' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ provider: null, status: 'none', model_type: 'llm', version: '1' })
    const audit = (
      await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs?resource_id=${m.id}&action=model.updated` })
    ).json().items
    expect(audit).toHaveLength(1)
    expect(audit[0].changes).toEqual({
      provider: ['openai', null],
      status: ['retired', 'none'],
      model_type: [null, 'llm'],
    })
    // A PATCH that changes nothing writes no audit record.
    await write({ method: 'PATCH', url: `/models/${m.id}`, payload: { version: '1' } })
    expect(
      (
        await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs?resource_id=${m.id}&action=model.updated` })
      ).json().items,
    ).toHaveLength(1)
  })
})
