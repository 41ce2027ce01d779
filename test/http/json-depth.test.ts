import { afterAll, beforeAll, expect, it } from 'vitest'
import { INTAKE_SECTIONS } from '../helpers/governance.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

// A body nested deeper than the limit is refused with a 400 naming the body before anything walks it (a 10 000 deep
// one was a 500: RangeError in the text check); bodies at the limit are read and validated as usual.

const nested = (depth: number, inner = '"x"') => `${'{"a":'.repeat(depth - 1)}{"a":${inner}}${'}'.repeat(depth - 1)}`
const nestedArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

describeEachDialect('JSON bodies nested too deep', (dialect) => {
  let t: TestApp
  let useCaseId: string
  beforeAll(async () => {
    t = await startTestApp(dialect)
    const q = await t.as(
      'acme',
      'write',
    )({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'INTAKE', name: 'Intake', target: 'use_case', sections: INTAKE_SECTIONS },
    })
    expect(q.statusCode, q.body).toBe(201)
    const uc = await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'depth' } })
    useCaseId = uc.json().id
    expect(
      (
        await t.as(
          'acme',
          'write',
        )({ method: 'POST', url: `/use_cases/${useCaseId}/questionnaires`, payload: { key: 'INTAKE' } })
      ).statusCode,
    ).toBe(201)
  })
  afterAll(async () => t?.close())

  // Each route with a body that reaches the nesting through a field of its schema.
  const routes = () => [
    {
      method: 'POST' as const,
      url: '/use_cases',
      body: (inner: string) => `{"name":"deep","custom_fields":[{"custom_field_id":"cf_x","value":${inner}}]}`,
    },
    { method: 'PATCH' as const, url: `/use_cases/${useCaseId}`, body: (inner: string) => `{"description":${inner}}` },
    {
      method: 'PUT' as const,
      url: `/use_cases/${useCaseId}/questionnaires/INTAKE/answers`,
      body: (inner: string) => `{"answers":[{"question_id":"decision","value":${inner}}]}`,
    },
    { method: 'POST' as const, url: '/audit_logs/query', body: (inner: string) => `{"resource_id":${inner}}` },
  ]
  const send = (route: ReturnType<typeof routes>[number], payload: string) =>
    t.as(
      'acme',
      'write',
    )({ method: route.method, url: route.url, headers: { 'content-type': 'application/json' }, payload })

  for (const depth of [10_000, 65]) {
    it(`answers ${depth} levels with a 400 problem naming the body on every route, and changes nothing`, async () => {
      const before = (await t.as('acme', 'read')({ method: 'GET', url: '/audit_logs?page_limit=100' })).json().items
        .length
      for (const route of routes()) {
        // The body's own nesting adds two or three levels: the inner value alone passes the limit.
        for (const inner of [nested(depth), nestedArray(depth)]) {
          const res = await send(route, route.body(inner))
          expect(res.statusCode, `${route.method} ${route.url}: ${res.body.slice(0, 300)}`).toBe(400)
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
          expect(res.json()).toMatchObject({
            code: 'bad_request',
            errors: [{ field: '(body)', message: 'nests deeper than 64 levels' }],
          })
          expect(res.json().detail).toMatch(/deeper than 64 levels/)
        }
      }
      expect(
        (await t.as('acme', 'read')({ method: 'GET', url: '/audit_logs?page_limit=100' })).json().items.length,
      ).toBe(before)
    })
  }

  it('reads a body of exactly 64 levels and validates it as usual (a 422 naming the field, not the depth)', async () => {
    for (const route of routes()) {
      // The route's envelope is 2 or 3 levels deep at the nested value: make the whole body exactly 64.
      const envelope = (route.body('X').match(/[[{]/g) ?? []).length
      const body = route.body(nested(64 - envelope))
      expect(body.split('{').length - 1 + (body.split('[').length - 1)).toBe(64)
      const res = await send(route, body)
      expect(res.statusCode, `${route.method} ${route.url}: ${res.body.slice(0, 300)}`).toBe(422)
      expect(res.json().code).toBe('validation_failed')
    }
    // Strings at any depth below the limit are still checked (the walk is iterative now).
    const nul = await send(routes()[1], `{"description":"a\\u0000b"}`)
    expect(nul.statusCode).toBe(422)
    expect(nul.json().errors).toEqual([
      { field: 'description', message: 'must not contain the NUL character (U+0000)' },
    ])
  })

  it('counts brackets inside strings as text, not nesting', async () => {
    const res = await t.as(
      'acme',
      'write',
    )({ method: 'PATCH', url: `/use_cases/${useCaseId}`, payload: { description: `${'{['.repeat(5000)}"\\` } })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().description).toBe(`${'{['.repeat(5000)}"\\`)
  })
})
