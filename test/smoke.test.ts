import { expect, it } from 'vitest'
import { describeEachDialect, startTestApp } from './helpers/harness.js'

describeEachDialect('smoke', (dialect) => {
  it('creates a use case', async () => {
    const t = await startTestApp(dialect)
    const req = t.as('acme', 'write')
    const res = await req({ method: 'POST', url: '/use_cases', payload: { name: 'Credit scoring', description: 'x' } })
    console.log(res.statusCode, res.body, res.headers)
    const list = await req({ method: 'GET', url: '/use_cases' })
    console.log(list.body)
    const audit = await req({ method: 'GET', url: '/audit_logs' })
    console.log(audit.body)
    expect(res.statusCode).toBe(201)
    await t.close()
  })
})
