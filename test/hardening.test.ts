import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUseCasesService } from '../src/modules/use-cases/use-cases.service.js'
import { systemCtx } from '../src/shared/context.js'
import { describeEachDialect, type TestApp, startTestApp } from './helpers/harness.js'

// What a hostile tenant with a valid key could break (issue 13), one describe per finding.
describeEachDialect('hardening against a hostile tenant', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => {
    await t?.close()
  })

  describe('text that is not well-formed Unicode or carries U+0000', () => {
    const verify = async (tenant: string) => (await t.as(tenant, 'read')({ method: 'GET', url: '/audit_logs/verify' })).json()

    it('is refused with 422 naming the field in bodies, nested members, queries and paths, and changes nothing', async () => {
      const write = t.as('text-a', 'write')
      const post = (payload: string) => write({ method: 'POST', url: '/use_cases', headers: { 'content-type': 'application/json' }, payload })
      // JSON.stringify keeps a lone surrogate as the escape \ud800, which is how an attacker sends it.
      for (const [payload, field] of [
        [JSON.stringify({ name: 'x\ud800y' }), 'name'],
        [JSON.stringify({ name: 'ok', description: 'a\udc00' }), 'description'],
        [JSON.stringify({ name: 'nul\u0000name' }), 'name'],
        [JSON.stringify({ name: 'ok', regions: ['eu', 'u\u0000s'] }), 'regions/1'],
      ] as const) {
        const res = await post(payload)
        expect(res.statusCode, payload).toBe(422)
        expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ field })] })
      }
      const uc = await post(JSON.stringify({ name: 'Well formed' }))
      expect(uc.statusCode).toBe(201)
      const patched = await write({ method: 'PATCH', url: `/use_cases/${uc.json().id}`, payload: { name: 'bad\ud83dname' } })
      expect(patched.statusCode).toBe(422)
      expect(patched.json().errors).toEqual([expect.objectContaining({ field: 'name' })])

      for (const url of ['/use_cases?q=%00', '/audit_logs?q=a%00b', '/audit_logs/export?format=csv&q=%00', '/models?q=%00']) {
        const res = await write({ method: 'GET', url })
        expect(res.statusCode, url).toBe(422)
        expect(res.json().errors).toEqual([expect.objectContaining({ field: 'q' })])
      }
      expect((await write({ method: 'GET', url: '/use_cases/uc_%00' })).statusCode).toBe(422)

      const names = (await write({ method: 'GET', url: '/use_cases' })).json().items.map((u: { name: string }) => u.name)
      expect(names).toEqual(['Well formed'])
      expect(await verify('text-a')).toMatchObject({ ok: true, first_bad_id: null })
    })

    it('keeps the audit chain verifiable when such text reaches a service by another path', async () => {
      await t.token('text-b', 'read')
      await createUseCasesService(t.deps).create(systemCtx('text-b'), { name: 'x\ud800y' } as never)
      await createUseCasesService(t.deps).create(systemCtx('text-b'), { name: 'after it' } as never)
      expect(await verify('text-b')).toMatchObject({ ok: true, first_bad_id: null })
    })
  })
})

describe('hardening: unit checks', () => {
  it('names nothing in well-formed input', async () => {
    const { malformedText } = await import('../src/http/plugins/validation.js')
    expect(malformedText({ a: ['ok', { b: 'fine 😀' }], n: 1, z: null })).toEqual([])
    expect(malformedText({ a: [{ 'k\u0000': 1 }] })).toEqual([{ field: 'a/0/k\\0', message: expect.stringContaining('field name') }])
  })
})
