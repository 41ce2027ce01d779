import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../helpers/harness.js'

describeEachDialect('HTTP behaviour: problems and request ids', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t.close())

  const expectProblem = (
    res: { statusCode: number; headers: Record<string, unknown>; json(): any },
    status: number,
    code: string,
  ) => {
    expect(res.statusCode).toBe(status)
    expect(res.headers['content-type']).toContain('application/problem+json')
    const body = res.json()
    expect(body).toMatchObject({ status, code, type: `https://aigov.dev/problems/${code.replaceAll('_', '-')}` })
    expect(typeof body.title).toBe('string')
    expect(typeof body.detail).toBe('string')
    expect(body.request_id).toBe(res.headers['x-request-id'])
    expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+|select |insert |SQLITE|stack/i)
    return body
  }

  it('answers an unknown route with 404 and a wrong method with 405 + Allow', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/nope' }), 404, 'not_found')
    const res = await t.as('acme', 'admin')({ method: 'PUT', url: '/use_cases' })
    const body = expectProblem(res, 405, 'method_not_allowed')
    expect(res.headers.allow).toBe('GET, POST')
    expect(body.instance).toBe(`${PREFIX}/use_cases`)
  })

  it('answers malformed JSON with 400 and changes nothing', async () => {
    const res = await t.as(
      'acme',
      'write',
    )({ method: 'POST', url: '/use_cases', headers: { 'content-type': 'application/json' }, payload: '{"name": ' })
    expectProblem(res, 400, 'bad_request')
    expect((await t.as('acme', 'read')({ method: 'GET', url: '/use_cases' })).json().items).toEqual([])
  })

  it('answers a body over 1 MiB with 413', async () => {
    const res = await t.as(
      'acme',
      'write',
    )({
      method: 'POST',
      url: '/use_cases',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'big', description: 'x'.repeat(1024 * 1024) }),
    })
    expectProblem(res, 413, 'payload_too_large')
  })

  it('answers a non-JSON body with 415', async () => {
    const res = await t.as(
      'acme',
      'write',
    )({ method: 'POST', url: '/use_cases', headers: { 'content-type': 'text/plain' }, payload: 'name=x' })
    expectProblem(res, 415, 'unsupported_media_type')
  })

  it('answers an unknown query parameter with 400 naming it', async () => {
    const body = expectProblem(
      await t.as('acme', 'read')({ method: 'GET', url: '/use_cases?colour=red' }),
      400,
      'bad_request',
    )
    expect(body.errors).toEqual([{ field: 'colour', message: 'unknown field' }])
  })

  it('refuses query parameters on routes that take none', async () => {
    const admin = t.as('acme', 'admin')
    const uc = (await admin({ method: 'POST', url: '/use_cases', payload: { name: 'No query' } })).json()
    for (const url of [`/use_cases/${uc.id}?verbose=1`, '/system?x=1', '/api_keys/key_x?y=2']) {
      const res = await admin({ method: 'GET', url })
      expect(res.statusCode, url).toBe(400)
    }
    expect(
      (await admin({ method: 'POST', url: '/use_cases?dry_run=1', payload: { name: 'Not created' } })).statusCode,
    ).toBe(400)
    expect((await admin({ method: 'GET', url: '/use_cases?q=not' })).json().items).toEqual([])
  })

  it('answers validation failures with 422, a duplicate name with 422 already_exists, and state conflicts with 409', async () => {
    expectProblem(
      await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 1 } }),
      422,
      'validation_failed',
    )
    const once = (await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'Once' } })).json()
    const dup = expectProblem(
      await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'once' } }),
      422,
      'already_exists',
    )
    expect(dup).toMatchObject({
      existing_id: once.id,
      errors: [{ field: 'name', message: expect.stringContaining('already exists') }],
    })
    const end = (await t.as('acme', 'read')({ method: 'GET', url: '/workflow_stages' }))
      .json()
      .items.find((s: { type: string }) => s.type === 'end')
    expectProblem(await t.as('acme', 'write')({ method: 'DELETE', url: `/workflow_stages/${end.id}` }), 409, 'conflict')
  })

  it('echoes a well-formed X-Request-ID and replaces a bad one', async () => {
    const echoed = await t.app.inject({ method: 'GET', url: '/livez', headers: { 'x-request-id': 'ci-run.42_a-b' } })
    expect(echoed.headers['x-request-id']).toBe('ci-run.42_a-b')
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const res = await t.app.inject({ method: 'GET', url: '/livez', headers: { 'x-request-id': bad } })
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    }
    const problem = await t.app.inject({
      method: 'GET',
      url: `${PREFIX}/use_cases`,
      headers: { 'x-request-id': 'trace-1' },
    })
    expect(problem.headers['x-request-id']).toBe('trace-1')
    expect(problem.json().request_id).toBe('trace-1')
  })

  it('logs every line of a request with its request id and never the credentials', async () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...chunk.toString().trim().split('\n'))
        done()
      },
    })
    const log = pino(
      {
        level: 'info',
        redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]'], censor: '[redacted]' },
      },
      sink,
    )
    const app = await buildApp({ ...t.deps, config: { ...t.config, debug: true }, log: log as never })
    const key = await t.apiKey('acme', 'write')
    const token = (
      await app.inject({
        method: 'POST',
        url: `${PREFIX}/auth/token`,
        headers: { 'x-api-key': key, 'x-tenant': 'acme', 'x-request-id': 'log-test-1' },
      })
    ).json().access_token
    await app.inject({
      method: 'POST',
      url: `${PREFIX}/use_cases`,
      headers: { authorization: `Bearer ${token}`, 'x-request-id': 'log-test-2' },
      payload: { name: 'Logged' },
    })
    await app.close()
    const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.request_id)
    expect(new Set(requestLines.map((l) => l.request_id))).toEqual(new Set(['log-test-1', 'log-test-2']))
    // One access line per request, at info.
    const access = requestLines.filter((l) => l.msg === 'request')
    expect(access.map((l) => [l.request_id, l.status, l.level])).toEqual([
      ['log-test-1', 200, 30],
      ['log-test-2', 201, 30],
    ])
    expect(access[1]).toMatchObject({
      method: 'POST',
      route: `${PREFIX}/use_cases`,
      tenant: 'acme',
      key_id: expect.stringMatching(/^key_/),
    })
    const all = lines.join('\n')
    expect(all).not.toContain(key)
    expect(all).not.toContain(token)
    expect(all).not.toContain(t.config.jwtSecret!)
  })
})
