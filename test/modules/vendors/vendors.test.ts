import { afterAll, beforeAll, expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { namedRecordTests } from '../../helpers/named-records.js'

describeEachDialect('vendors: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/vendors',
    resourceType: 'vendor',
    idPrefix: 'vnd',
    validBody: (i) => ({ name: `Vendor ${i}`, website: 'https://example.com' }),
    updateBody: { status: 'under_review' },
    deletable: true,
  })
})

describeEachDialect('vendors: names', (dialect) => namedRecordTests(dialect, { collection: '/vendors' }))

describeEachDialect('vendors: fields', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  it('defaults status to active, rejects unknown enum values with 422, filters by status', async () => {
    const write = t.as('acme', 'write')
    const v = await write({ method: 'POST', url: '/vendors', payload: { name: 'Acme AI' } })
    expect(v.json()).toMatchObject({ status: 'active', description: null, website: null })
    expect(
      (await write({ method: 'POST', url: '/vendors', payload: { name: 'X', status: 'banned' } })).statusCode,
    ).toBe(422)
    await write({ method: 'POST', url: '/vendors', payload: { name: 'Old Co', status: 'inactive' } })
    const read = t.as('acme', 'read')
    expect(
      (await read({ method: 'GET', url: '/vendors?status=inactive' }))
        .json()
        .items.map((x: { name: string }) => x.name),
    ).toEqual(['Old Co'])
    expect(
      (await read({ method: 'GET', url: '/vendors?status=active' })).json().items.map((x: { name: string }) => x.name),
    ).toEqual(['Acme AI'])
  })

  it('PATCH: null clears, status null returns to active', async () => {
    const write = t.as('acme', 'write')
    const v = (
      await write({
        method: 'POST',
        url: '/vendors',
        payload: { name: 'Clearable', website: 'https://c.example', status: 'under_review' },
      })
    ).json()
    const res = await write({
      method: 'PATCH',
      url: `/vendors/${v.id}`,
      payload: { website: null, status: null, description: 'now described' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      website: null,
      status: 'active',
      description: 'now described',
      name: 'Clearable',
    })
    expect((await write({ method: 'PATCH', url: `/vendors/${v.id}`, payload: { name: null } })).statusCode).toBe(422)
  })
})
