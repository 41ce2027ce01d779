import { afterAll, beforeAll, expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { namedRecordTests } from '../../helpers/named-records.js'

describeEachDialect('risk types: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/risk_types',
    resourceType: 'risk_type',
    idPrefix: 'rt',
    validBody: (i) => ({ name: `Risk type ${i}`, description: 'contract test' }),
    updateBody: { hidden: true },
    deletable: true,
  })
})

describeEachDialect('risk types: names', (dialect) => namedRecordTests(dialect, { collection: '/risk_types' }))

describeEachDialect('risk types: fields', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  it('stores custom and hidden as booleans with defaults, rejects non-booleans, and null restores the default', async () => {
    const write = t.as('acme', 'write')
    const rt = await write({ method: 'POST', url: '/risk_types', payload: { name: 'Privacy' } })
    expect(rt.json()).toMatchObject({ custom: true, hidden: false, description: null })
    expect(
      (await write({ method: 'POST', url: '/risk_types', payload: { name: 'X', hidden: 'yes' } })).statusCode,
    ).toBe(422)
    expect((await write({ method: 'POST', url: '/risk_types', payload: { name: 'Y', hidden: 1 } })).statusCode).toBe(
      422,
    )
    const hidden = await write({
      method: 'PATCH',
      url: `/risk_types/${rt.json().id}`,
      payload: { hidden: true, custom: false, description: 'PII' },
    })
    expect(hidden.json()).toMatchObject({ hidden: true, custom: false, description: 'PII' })
    expect((await t.as('acme', 'read')({ method: 'GET', url: `/risk_types/${rt.json().id}` })).json()).toMatchObject({
      hidden: true,
      custom: false,
    })
    const cleared = await write({
      method: 'PATCH',
      url: `/risk_types/${rt.json().id}`,
      payload: { hidden: null, custom: null, description: null },
    })
    expect(cleared.json()).toMatchObject({ hidden: false, custom: true, description: null })
    const audit = (
      await t.as(
        'acme',
        'read',
      )({ method: 'GET', url: `/audit_logs?resource_id=${rt.json().id}&action=risk_type.updated` })
    ).json().items
    expect(audit.map((a: { changes: unknown }) => a.changes)).toContainEqual({
      hidden: [true, false],
      custom: [false, true],
      description: ['PII', null],
    })
  })
})
