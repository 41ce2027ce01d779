import { connect } from 'node:net'
import { CompiledQuery } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seed } from '../../src/cli/seed.js'
import { createAuditLogsService, EXPORTS_PER_TENANT } from '../../src/modules/audit-logs/audit-logs.service.js'
import { createUseCasesService } from '../../src/modules/use-cases/use-cases.service.js'
import { systemCtx } from '../../src/shared/context.js'
import { applyKeyset, keyset } from '../../src/shared/pagination.js'
import { describeEachDialect, freshDatabase, REDIS_URL, type TestApp, startTestApp } from '../helpers/harness.js'
import { INTAKE_SECTIONS, multipart } from '../helpers/governance.js'
import { runCli, startServiceProcess } from '../helpers/process.js'

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
    const verify = async (tenant: string) =>
      (await t.as(tenant, 'read')({ method: 'GET', url: '/audit_logs/verify' })).json()

    it('is refused with 422 naming the field in bodies, nested members, queries and paths, and changes nothing', async () => {
      const write = t.as('text-a', 'write')
      const post = (payload: string) =>
        write({ method: 'POST', url: '/use_cases', headers: { 'content-type': 'application/json' }, payload })
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
      const patched = await write({
        method: 'PATCH',
        url: `/use_cases/${uc.json().id}`,
        payload: { name: 'bad\ud83dname' },
      })
      expect(patched.statusCode).toBe(422)
      expect(patched.json().errors).toEqual([expect.objectContaining({ field: 'name' })])

      for (const url of [
        '/use_cases?q=%00',
        '/audit_logs?q=a%00b',
        '/audit_logs/export?format=csv&q=%00',
        '/models?q=%00',
      ]) {
        const res = await write({ method: 'GET', url })
        expect(res.statusCode, url).toBe(422)
        expect(res.json().errors).toEqual([expect.objectContaining({ field: 'q' })])
      }
      expect((await write({ method: 'GET', url: '/use_cases/uc_%00' })).statusCode).toBe(422)

      const names = (await write({ method: 'GET', url: '/use_cases' }))
        .json()
        .items.map((u: { name: string }) => u.name)
      expect(names).toEqual(['Well formed'])
      expect(await verify('text-a')).toMatchObject({ ok: true, first_bad_id: null })
    })

    it('is refused in questionnaire answers, custom-field values, webhook descriptions and evidence, JSON or multipart', async () => {
      const write = t.as('text-c', 'write')
      const created = async (url: string, payload: object, as = write) => {
        const res = await as({ method: 'POST', url, payload })
        expect(res.statusCode, res.body).toBe(201)
        return res.json().id as string
      }
      const refused = async (res: { statusCode: number; body: string; json(): any }, field: string) => {
        expect(res.statusCode, res.body).toBe(422)
        expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ field })] })
      }
      await created('/questionnaires', { key: 'TEXT', name: 'Text', target: 'use_case', sections: INTAKE_SECTIONS })
      const uc = await created('/use_cases', { name: 'Checked' })
      await created(`/use_cases/${uc}/questionnaires`, { key: 'TEXT' })
      const field = await created('/custom_fields', { name: 'Cost centre' }, t.as('text-c', 'admin'))

      await refused(
        await write({
          method: 'PUT',
          url: `/use_cases/${uc}/questionnaires/TEXT/answers`,
          payload: { answers: [{ question_id: 'decision', value: 'a\u0000b' }] },
        }),
        'answers/0/value',
      )
      await refused(
        await write({
          method: 'PUT',
          url: `/use_cases/${uc}/questionnaires/TEXT/answers`,
          payload: { answers: [{ question_id: 'decision', value: 'a\ud800b' }] },
        }),
        'answers/0/value',
      )
      await refused(
        await write({
          method: 'PATCH',
          url: `/use_cases/${uc}`,
          payload: { custom_fields: [{ custom_field_id: field, value: 'x\udfffy' }] },
        }),
        'custom_fields/0/value',
      )
      await refused(
        await write({
          method: 'POST',
          url: '/use_cases',
          payload: { name: 'With a value', custom_fields: [{ custom_field_id: field, value: 'x\u0000' }] },
        }),
        'custom_fields/0/value',
      )
      await refused(
        await t.as(
          'text-c',
          'admin',
        )({
          method: 'POST',
          url: '/webhook_endpoints',
          payload: { url: 'https://hooks.example.com/t', description: 'Jira\ud83d', events: ['*'] },
        }),
        'description',
      )
      await refused(
        await write({
          method: 'POST',
          url: '/evidence',
          payload: { kind: 'link', url: 'https://wiki.example.com/x', title: 'a\u0000b' },
        }),
        'title',
      )

      // Multipart fields arrive as raw bytes: a NUL byte in the title, the file name or the part's type.
      const upload = async (parts: Parameters<typeof multipart>[0]) => {
        const { body, contentType } = multipart(parts)
        return write({ method: 'POST', url: '/evidence', payload: body, headers: { 'content-type': contentType } })
      }
      const file = (overrides: object) => ({
        name: 'file',
        value: 'content',
        filename: 'report.txt',
        type: 'text/plain',
        ...overrides,
      })
      await refused(await upload([{ name: 'title', value: 'a\u0000b' }, file({})]), 'title')
      await refused(await upload([file({}), { name: 'title', value: 'after\u0000the file' }]), 'title')
      await refused(await upload([file({ filename: 'a\u0000b.txt' })]), 'file')
      await refused(await upload([file({ type: 'text/pl\u0000ain' })]), 'file')
      await refused(await upload([file({ type: 'text/pl\u0001ain' })]), 'file')

      const read = t.as('text-c', 'read')
      expect((await read({ method: 'GET', url: `/use_cases/${uc}/questionnaires/TEXT` })).json().answers).toEqual([])
      expect((await read({ method: 'GET', url: `/use_cases/${uc}` })).json().custom_fields).toEqual([])
      expect((await read({ method: 'GET', url: '/use_cases' })).json().items).toHaveLength(1)
      expect((await t.as('text-c', 'admin')({ method: 'GET', url: '/webhook_endpoints' })).json().items).toEqual([])
      expect((await read({ method: 'GET', url: '/evidence' })).json().items).toEqual([])
      expect(
        await t.deps.database.db.selectFrom('evidence_blobs').select('id').where('tenant_id', '=', 'text-c').execute(),
      ).toEqual([])
      expect(await verify('text-c')).toMatchObject({ ok: true, first_bad_id: null })
      // The well-formed upload still works.
      expect((await upload([{ name: 'title', value: 'Fine' }, file({})])).statusCode).toBe(201)
    })

    it('keeps the audit chain verifiable when such text reaches a service by another path', async () => {
      await t.token('text-b', 'read')
      await createUseCasesService(t.deps).create(systemCtx('text-b'), { name: 'x\ud800y' } as never)
      await createUseCasesService(t.deps).create(systemCtx('text-b'), { name: 'after it' } as never)
      expect(await verify('text-b')).toMatchObject({ ok: true, first_bad_id: null })
    })
  })
})

describeEachDialect('audit exports under a hostile tenant', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
    await seed(t.deps.database, [], { tenant: 'exporter', useCases: 600, auditLogs: 1800, progress: () => undefined })
  })
  afterAll(async () => {
    await t?.close()
  })

  it('lets the event loop serve others between the batches of an export', async () => {
    let turns = 0
    let counting = true
    const count = () => {
      turns++
      if (counting) setImmediate(count)
    }
    setImmediate(count)
    let lines = 0
    for await (const chunk of createAuditLogsService(t.deps).export(systemCtx('exporter'), {
      format: 'ndjson',
    } as never))
      lines += String(chunk).split('\n').length - 1
    counting = false
    expect(lines).toBeGreaterThanOrEqual(1800)
    // Synchronous reads back to back would leave no turn to anyone until the export ends.
    expect(turns).toBeGreaterThanOrEqual(3)
  })

  // SQLite reads hold the event loop; PostgreSQL's answers arrive as they come, and only their mapping does.
  it.runIf(dialect === 'sqlite')(
    'runs one batch of all running exports per turn of the event loop, so requests wait behind one batch only',
    async () => {
      const service = createAuditLogsService(t.deps)
      let delivered = new Set<number>()
      let busiestTurn = 0
      let turns = 0
      let probing = true
      const probe = () => {
        busiestTurn = Math.max(busiestTurn, delivered.size)
        delivered = new Set()
        turns++
        if (probing) setImmediate(probe)
      }
      setImmediate(probe)
      const lines = await Promise.all(
        Array.from({ length: EXPORTS_PER_TENANT }, async (_v, n) => {
          let count = 0
          for await (const chunk of service.export(systemCtx('exporter'), { format: 'ndjson' } as never)) {
            delivered.add(n)
            count += String(chunk).split('\n').length - 1
          }
          return count
        }),
      )
      probing = false
      expect(lines.every((count) => count >= 1800)).toBe(true)
      // Each export waiting a turn of its own would let all of them read a batch between two turns of the probe.
      expect(busiestTurn).toBe(1)
      expect(turns).toBeGreaterThan(EXPORTS_PER_TENANT * 3)
    },
  )

  it.runIf(dialect === 'sqlite')(
    'reads a page after a cursor by seeking the index, not from the tenant’s first record',
    async () => {
      const { db } = t.deps.database
      const page = await createAuditLogsService(t.deps).list(systemCtx('exporter'), {
        sort: 'created_at',
        page_limit: 1000,
      } as never)
      const after = keyset(
        { sort: 'created_at', page_after: page.pagination.next_cursor!, page_limit: 100 },
        { created_at: 'created_at' },
      )
      const query = applyKeyset(
        db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', 'exporter'),
        after,
      ).compile()
      const plan = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
      )
      expect(plan.rows.map((r) => r.detail).join('; ')).toMatch(/\(tenant_id=\? AND \(created_at,id\)>\(\?,\?\)\)/)
    },
  )

  it(`bounds concurrent exports per tenant at ${EXPORTS_PER_TENANT} with a 429 problem, freeing a slot when a stream closes`, async () => {
    const service = createAuditLogsService(t.deps)
    const held = Array.from({ length: EXPORTS_PER_TENANT }, () =>
      service.export(systemCtx('exporter'), { format: 'csv' } as never),
    )
    const refused = await t.as('exporter', 'read')({ method: 'GET', url: '/audit_logs/export?format=csv' })
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBeDefined()
    expect(refused.json()).toMatchObject({ code: 'rate_limited', retry_after: expect.any(Number) })
    // Another tenant is not held back by this one's exports.
    expect(
      (await t.as('other-exporter', 'read')({ method: 'GET', url: '/audit_logs/export?format=csv' })).statusCode,
    ).toBe(200)
    held[0].destroy()
    await new Promise((resolve) => held[0].once('close', resolve))
    const allowed = await t.as('exporter', 'read')({ method: 'GET', url: '/audit_logs/export?format=ndjson' })
    expect(allowed.statusCode).toBe(200)
    expect(allowed.body.trim().split('\n').length).toBeGreaterThanOrEqual(1800)
    for (const stream of held) stream.destroy()
  })

  it('neutralises spreadsheet formulas in CSV exports', async () => {
    const write = t.as('csv-formulas', 'write')
    // Names are trimmed, so a leading tab or CR reaches the export only from other fields: see the unit check.
    const names = ['=HYPERLINK("http://evil","x")', '+1+1', '-2+3', '@SUM(A1)', 'plain']
    for (const name of names)
      expect((await write({ method: 'POST', url: '/vendors', payload: { name } })).statusCode).toBe(201)
    const csv = (await write({ method: 'GET', url: '/audit_logs/export?format=csv&action=vendor.created' })).body
    const cells = csv
      .split('\r\n')
      .slice(1, -1)
      .map((line) => line.split(',')[5])
    expect(cells).toEqual(['"\'=HYPERLINK(""http://evil""', "'+1+1", "'-2+3", "'@SUM(A1)", 'plain'])
    // NDJSON carries the names unchanged.
    const ndjson = (await write({ method: 'GET', url: '/audit_logs/export?format=ndjson&action=vendor.created' })).body
    expect(
      ndjson
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).resource_name),
    ).toEqual(names)
  })
})

describeEachDialect('API key secrets and Idempotency-Key replays', (dialect) => {
  for (const withRedis of REDIS_URL ? [false, true] : [false]) {
    it(`never stores or replays a key's secret${withRedis ? ' (Redis)' : ''}`, async () => {
      const t = await startTestApp(dialect, withRedis ? { REDIS_URL: REDIS_URL! } : {})
      try {
        const admin = t.as('idem-keys', 'admin')
        const request = {
          method: 'POST' as const,
          url: '/api_keys',
          headers: { 'idempotency-key': 'create-once' },
          payload: { name: 'ci', role: 'read' },
        }
        const first = await admin(request)
        expect(first.statusCode).toBe(201)
        const secret = first.json().key as string
        expect(first.json()).toMatchObject({ secret_shown: true, key: expect.stringMatching(/^sk_/) })
        const replay = await admin(request)
        expect(replay.statusCode).toBe(201)
        expect(replay.headers['idempotent-replayed']).toBe('true')
        expect(replay.json()).toMatchObject({ id: first.json().id, name: 'ci', role: 'read', secret_shown: false })
        expect(replay.json()).not.toHaveProperty('key')
        expect(replay.body).not.toContain(secret)

        const stored = await t.deps.database.db.selectFrom('idempotency_records').select('response').execute()
        for (const row of stored) expect(row.response ?? '').not.toContain(secret)
        if (withRedis) {
          const keys = await t.deps.redis!.keys('aigov:idem:*')
          expect(keys.length).toBeGreaterThan(0)
          for (const key of keys) expect((await t.deps.redis!.get(key)) ?? '').not.toContain(secret)
        } else expect(stored.length).toBeGreaterThan(0)
      } finally {
        await t.close()
      }
    })
  }
})

describeEachDialect('concurrent read-modify-writes', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => {
    await t?.close()
  })

  // Each family's PATCH reads the row, computes the change and writes it: the audit "before" must be what was replaced.
  for (const [collection, resource, field] of [
    ['use_cases', 'use_case', 'description'],
    ['models', 'model', 'summary'],
    ['vendors', 'vendor', 'description'],
    ['risk_types', 'risk_type', 'description'],
  ] as const) {
    it(`records true before values for 30 parallel PATCHes of one ${resource}`, async () => {
      const write = t.as('rmw', 'write')
      const id = (
        await write({
          method: 'POST',
          url: `/${collection}`,
          payload: { name: `Contended ${resource}`, [field]: 'start' },
        })
      ).json().id
      const results = await Promise.all(
        Array.from({ length: 30 }, (_v, i) =>
          write({ method: 'PATCH', url: `/${collection}/${id}`, payload: { [field]: `writer ${i}` } }),
        ),
      )
      expect(results.map((r) => r.statusCode)).toEqual(Array(30).fill(200))
      const audit = (
        await write({
          method: 'GET',
          url: `/audit_logs?resource_id=${id}&action=${resource}.updated&page_limit=100&sort=created_at`,
        })
      ).json().items
      expect(audit).toHaveLength(30)
      let current = 'start'
      for (const record of audit) {
        expect(record.changes[field][0]).toBe(current)
        current = record.changes[field][1]
      }
      expect((await write({ method: 'GET', url: `/${collection}/${id}` })).json()[field]).toBe(current)
    })
  }
})

describeEachDialect('smaller findings', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => {
    await t?.close()
  })

  it('compares names by their NFKC form without invisible characters, and refuses control characters', async () => {
    const write = t.as('names', 'write')
    for (const collection of ['use_cases', 'vendors', 'models']) {
      expect((await write({ method: 'POST', url: `/${collection}`, payload: { name: 'dupname' } })).statusCode).toBe(
        201,
      )
      for (const lookalike of ['ｄｕｐｎａｍｅ', 'dup\u200bname', '\u00adDUPNAME', 'dupname\ufeff']) {
        const res = await write({ method: 'POST', url: `/${collection}`, payload: { name: lookalike } })
        expect(res.statusCode, `${collection} ${JSON.stringify(lookalike)}`).not.toBe(201)
        expect(['conflict', 'already_exists']).toContain(res.json().code)
      }
      for (const control of ['tab\there', 'line\nbreak', 'esc\u001b[31m', '\u0007bell']) {
        const res = await write({ method: 'POST', url: `/${collection}`, payload: { name: control } })
        expect(res.statusCode, JSON.stringify(control)).toBe(422)
        expect(res.json().errors).toEqual([expect.objectContaining({ field: 'name' })])
      }
    }
    // Search folds the same way.
    expect(
      (await write({ method: 'GET', url: '/vendors?q=%EF%BD%84%EF%BD%95%EF%BD%90' }))
        .json()
        .items.map((v: { name: string }) => v.name),
    ).toEqual(['dupname'])
  })

  it('validates and finds the record before answering 304 to a current ETag', async () => {
    const read = t.as('etag-order', 'read')
    const etag = (await read({ method: 'GET', url: '/use_cases' })).headers.etag as string
    expect(etag).toBeTruthy()
    const conditional = (url: string) => read({ method: 'GET', url, headers: { 'if-none-match': etag } })
    expect((await conditional('/use_cases')).statusCode).toBe(304)
    expect((await conditional('/use_cases?page_limit=0')).statusCode).toBe(400)
    expect((await conditional('/use_cases?colour=red')).statusCode).toBe(400)
    expect((await conditional('/use_cases/uc_00000000000000000000000000')).statusCode).toBe(404)
    expect((await conditional('/models')).statusCode).toBe(304)
    const fresh = await conditional('/vendors?page_limit=3')
    expect(fresh.statusCode).toBe(304)
    expect(fresh.body).toBe('')
  })

  it('takes the role from the key as it is now, not from the token', async () => {
    const secret = await t.apiKey('role-change', 'write')
    const token = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/integration/auth/token',
        headers: { 'x-api-key': secret, 'x-tenant': 'role-change' },
      })
    ).json().access_token
    const post = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/integration/vendors',
        headers: { authorization: `Bearer ${token}` },
        payload: { name: `v ${Math.random()}` },
      })
    expect((await post()).statusCode).toBe(201)
    const key = await t.deps.database.db
      .selectFrom('api_keys')
      .select('id')
      .where('tenant_id', '=', 'role-change')
      .where('role', '=', 'write')
      .executeTakeFirstOrThrow()
    await t.deps.database.db.updateTable('api_keys').set({ role: 'read' }).where('id', '=', key.id).execute()
    t.deps.keyStatus.forget('role-change', key.id)
    const refused = await post()
    expect(refused.statusCode).toBe(403)
    expect(refused.json().detail).toContain('"read"')
  })

  it('refuses to revoke the tenant’s last admin key (409), and allows it once another exists', async () => {
    const admin = t.as('last-admin', 'admin')
    const keys = (await admin({ method: 'GET', url: '/api_keys' })).json().items
    expect(keys).toHaveLength(1)
    const own = keys[0].id
    const refused = await admin({ method: 'DELETE', url: `/api_keys/${own}` })
    expect(refused.statusCode).toBe(409)
    expect(refused.json().detail).toContain('last admin key')
    const other = (
      await admin({ method: 'POST', url: '/api_keys', payload: { name: 'second admin', role: 'admin' } })
    ).json()
    expect((await admin({ method: 'DELETE', url: `/api_keys/${other.id}` })).statusCode).toBe(204)
    expect((await admin({ method: 'DELETE', url: `/api_keys/${own}` })).statusCode).toBe(409)
    // A read key can always go.
    const reader = (await admin({ method: 'POST', url: '/api_keys', payload: { name: 'reader', role: 'read' } })).json()
    expect((await admin({ method: 'DELETE', url: `/api_keys/${reader.id}` })).statusCode).toBe(204)
  })
})

describe('settings and logs', () => {
  it('refuses a bootstrap SERVICE_API_KEY shorter than 32 characters of a key’s alphabet, naming the setting', async () => {
    const db = await freshDatabase('sqlite')
    try {
      for (const key of ['a', 'sk_short', 'x'.repeat(31), `${'x'.repeat(40)}!`]) {
        const res = runCli(['serve'], {
          ...db.env,
          SERVICE_API_KEY: key,
          SERVICE_PORT: '0',
          SERVICE_JWT_SECRET: 'bootstrap-key-test-secret-of-32-bytes-or-more',
        })
        expect(res.code, key).toBe(1)
        expect(res.stderr).toContain('SERVICE_API_KEY')
      }
    } finally {
      await db.drop()
    }
    const { checkBootstrapKey } = await import('../../src/config.js')
    expect(() => checkBootstrapKey(`sk_${'A1'.repeat(16)}`)).not.toThrow()
  })

  it('masks credentials in the query string of logged URLs (SERVICE_DEBUG)', async () => {
    const db = await freshDatabase('sqlite')
    const service = await startServiceProcess({
      ...db.env,
      SERVICE_DEBUG: 'true',
      LOG_LEVEL: 'debug',
      SERVICE_STARTER_LIBRARY: 'false',
      SERVICE_JWT_SECRET: 'debug-log-test-secret-of-32-bytes-or-more',
    })
    try {
      await (
        await fetch(
          `${service.baseUrl}/livez?access_token=tok-${'s'.repeat(20)}&api_key=key-${'k'.repeat(20)}&page_limit=5`,
        )
      ).text()
      await new Promise((resolve) => setTimeout(resolve, 200))
      // The access line names the path without its query; anything else logging the URL masks credentials in it.
      expect(service.output()).toContain('"path":"/livez","status":400')
      expect(service.output()).not.toContain('s'.repeat(20))
      expect(service.output()).not.toContain('k'.repeat(20))
      const { redactQuery } = await import('../../src/main.js')
      expect(redactQuery('/livez?access_token=t&api_key=k&page_limit=5')).toBe(
        '/livez?access_token=[redacted]&api_key=[redacted]&page_limit=5',
      )
    } finally {
      await service.stop()
      await db.drop()
    }
  })
})

describe('requests Node refuses before routing', () => {
  it('answers 400 and 431 as problem documents', async () => {
    const t = await startTestApp('sqlite')
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = t.app.server.address() as { port: number }
      const raw = (request: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => socket.end(request))
          let answer = ''
          socket.on('data', (d) => (answer += d))
          socket.on('close', () => resolve(answer))
          socket.on('error', reject)
        })
      for (const [request, status] of [
        ['NOT HTTP AT ALL\r\n\r\n', 400],
        [`GET /livez HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ] as const) {
        const answer = await raw(request)
        expect(answer).toMatch(new RegExp(`^HTTP/1.1 ${status} `))
        expect(answer).toContain('Content-Type: application/problem+json')
        expect(JSON.parse(answer.split('\r\n\r\n')[1])).toMatchObject({
          status,
          type: expect.stringContaining('/problems/'),
        })
      }
    } finally {
      await t.close()
    }
  })
})

describe('hardening: unit checks', () => {
  it('names nothing in well-formed input', async () => {
    const { malformedText } = await import('../../src/http/plugins/validation.js')
    expect(malformedText({ a: ['ok', { b: 'fine 😀' }], n: 1, z: null })).toEqual([])
    const { csvField } = await import('../../src/modules/audit-logs/audit-export.js')
    expect([csvField('\tx'), csvField('\rx'), csvField('a=b'), csvField(-1)]).toEqual(["'\tx", '"\'\rx"', 'a=b', "'-1"])
    expect(malformedText({ a: [{ 'k\u0000': 1 }] })).toEqual([
      { field: 'a/0/k\\0', message: expect.stringContaining('field name') },
    ])
  })
})

describe('credential failures and one budget per key across /mcp and the API', () => {
  for (const withRedis of REDIS_URL ? [false, true] : [false]) {
    it(`limits wrong API keys on /mcp per tenant and address, and counts MCP and HTTP calls of a key together${withRedis ? ' (Redis)' : ''}`, async () => {
      const t = await startTestApp('sqlite', {
        ENABLE_MCP_SERVER: 'true',
        RATE_LIMIT_TOKEN_PER_MINUTE: '5',
        RATE_LIMIT_PER_MINUTE: '8',
        ...(withRedis ? { REDIS_URL: REDIS_URL! } : {}),
      })
      try {
        // Redis counters outlive the app: a tenant name of this run only.
        const guess = `guess-${Date.now().toString(36)}`
        const right = await t.apiKey(guess, 'read')
        const mcp = (headers: Record<string, string>) =>
          t.app.inject({
            method: 'POST',
            url: '/mcp',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': '2025-06-18',
              ...headers,
            },
            payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          })
        const statuses = []
        for (let i = 0; i < 8; i++)
          statuses.push((await mcp({ 'x-api-key': `sk_wrong_${i}`, 'x-tenant': guess })).statusCode)
        expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429])
        // Past the budget even the right key is refused: a guess that hits learns nothing.
        const refused = await mcp({ 'x-api-key': right, 'x-tenant': guess })
        expect(refused.statusCode).toBe(429)
        expect(refused.json()).toMatchObject({ code: 'rate_limited', retry_after: expect.any(Number) })
        // Another tenant from the same address is not held back.
        expect((await mcp({ 'x-api-key': 'sk_wrong', 'x-tenant': `${guess}-other` })).statusCode).toBe(401)

        // One key's budget (8 a minute) is shared by its MCP and HTTP calls.
        const bearer = { authorization: `Bearer ${await t.token('budget', 'read')}` }
        const mixed = []
        for (let i = 0; i < 5; i++) {
          mixed.push((await mcp(bearer)).statusCode)
          mixed.push((await t.as('budget', 'read')({ method: 'GET', url: '/use_cases' })).statusCode)
        }
        expect(mixed.filter((s) => s === 200)).toHaveLength(8)
        expect(mixed.slice(8)).toEqual([429, 429])
      } finally {
        await t.close()
      }
    })
  }
})
