import { afterAll, beforeAll, expect, it } from 'vitest'
import { systemCtx } from '../../src/shared/context.js'
import { createServices } from '../../src/services.js'
import { toAuditLog } from '../../src/modules/audit-logs/audit-logs.service.js'
import { dispatchStatements } from '../../src/modules/webhooks/webhooks.delivery-repo.js'
import { riskTypeFields } from '../../src/modules/risk-types/risk-types.service.js'
import { itemJson } from '../../src/shared/item-json.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

// The governed families' GETs send JSON the database renders; their writes, MCP and events render items in
// JavaScript. Both renderings must give the same items for records of every shape, on both databases.

const sections = [
  {
    id: 's1',
    title: 'Purpose',
    questions: [{ id: 'purpose', question: 'What does it decide?', evidence_type: 'text' }],
  },
]
const awkward = 'Quotes " and \\ backslash, tab\t, newline\n, \u2028 separator, émoji 🧪, <html> & ünïcödé'

describeEachDialect('records rendered by the database', (dialect) => {
  let t: TestApp
  let services: ReturnType<typeof createServices>
  const ctx = systemCtx('acme')
  const ids: Record<'use_cases' | 'models' | 'vendors', string[]> = { use_cases: [], models: [], vendors: [] }
  let teamId = ''

  beforeAll(async () => {
    t = await startTestApp(dialect)
    services = createServices(t.deps)
    const write = t.as('acme', 'write')
    for (const key of ['ZETA', 'ALPHA']) {
      expect(
        (
          await write({
            method: 'POST',
            url: '/questionnaires',
            payload: { key, name: key, target: 'use_case', sections },
          })
        ).statusCode,
      ).toBe(201)
    }
    const named = await services.users.create(ctx, { email: 'ada@example.com', name: 'Ada Lovelace' })
    const unnamed = await services.users.create(ctx, { email: 'nameless@example.com' })
    const team = await services.teams.create(ctx, { name: 'Model risk' })
    teamId = team.id
    const field = (body: object) =>
      services.customFields.create(ctx, { name: `Field ${Math.random()}`, ...body } as never)
    const text = await field({ type: 'string' })
    const tags = await field({ type: 'string', multiple: true })
    const number = await field({ type: 'number' })
    const flag = await field({ type: 'boolean' })
    const when = await field({ type: 'datetime' })
    const person = await field({ type: 'user' })
    const reviewers = await field({ type: 'user', multiple: true })
    const values = [
      { custom_field_id: text.id, value: awkward },
      { custom_field_id: tags.id, value: ['b', 'a', 'c'] },
      { custom_field_id: number.id, value: 0.1 },
      { custom_field_id: flag.id, value: false },
      { custom_field_id: when.id, value: '2026-01-02T03:04:05+02:00' },
      { custom_field_id: person.id, value: named.id },
      { custom_field_id: reviewers.id, value: [unnamed.id, named.id] },
    ]
    const owners = [undefined, { owner_id: named.id }, { owner_id: unnamed.id }, { owner_id: team.id }]
    for (const [i, owner] of owners.entries()) {
      const some = values.slice(0, i * 2 + 1)
      ids.use_cases.push(
        (
          await services.useCases.create(ctx, {
            name: `Use case ${i} ${awkward}`,
            description: i === 0 ? null : awkward,
            risk_category_level: i === 1 ? 'high' : undefined,
            regions: i === 0 ? [] : ['EU', 'US'],
            industries: ['finance', awkward],
            owner,
            custom_fields: i === 0 ? undefined : some,
            questionnaire_ids: i === 2 ? ['ZETA+1', 'ALPHA+1'] : undefined,
          } as never)
        ).id,
      )
      ids.models.push(
        (
          await services.models.create(ctx, {
            name: `Model ${i}`,
            summary: awkward,
            owner,
            custom_fields: i === 0 ? undefined : some,
          } as never)
        ).id,
      )
      ids.vendors.push(
        (
          await services.vendors.create(ctx, {
            name: `Vendor ${i}`,
            website: 'https://example.com',
            owner,
            custom_fields: i === 0 ? undefined : some,
          } as never)
        ).id,
      )
    }
    // A value removed from the middle of a list keeps the rest in order.
    await services.useCases.update(ctx, ids.use_cases[3], {
      custom_fields: [{ custom_field_id: tags.id, value: ['z', 'y'] }],
    } as never)
  })
  afterAll(async () => t?.close())

  const families = () =>
    [
      ['use_cases', services.useCases],
      ['models', services.models],
      ['vendors', services.vendors],
    ] as const

  it('gives every record the item its JavaScript rendering gives', async () => {
    for (const [family, service] of families()) {
      for (const id of ids[family]) {
        expect(JSON.parse((await service.getJson(ctx, id)).toString()), `${family} ${id}`).toEqual(
          await service.get(ctx, id),
        )
      }
    }
  })

  it('renders the fields of the families without database reads as their JavaScript does (flags as booleans)', async () => {
    const { db } = t.deps.database
    for (const body of [
      { name: 'Flags default' },
      { name: 'Flags set', custom: false, hidden: true, description: awkward },
    ]) {
      const created = await services.riskTypes.create(ctx, body as never)
      const row = await db
        .selectFrom('risk_types')
        .select(itemJson(riskTypeFields.json, 'risk_types', dialect).as('item'))
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow()
      const item = typeof row.item === 'string' ? JSON.parse(row.item) : row.item
      expect(item).toEqual(created)
    }
  })

  it('renders every audit record as the audit log gives it, for events', async () => {
    const rows = await t.deps.database.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('tenant_id', '=', 'acme')
      .orderBy('seq')
      .execute()
    const rendered = await dispatchStatements(t.deps.database).eventsAfter('acme', 0, rows.length)
    expect(rendered.map((r) => r.id)).toEqual(rows.map((r) => r.id))
    expect(
      rows.some((r) => r.metadata !== null) &&
        rows.some((r) => r.changes?.includes('\\u2028') || r.changes?.includes('\u2028')),
    ).toBe(true)
    for (const [i, row] of rows.entries()) {
      const { data, ...columns } = rendered[i]
      expect(JSON.parse(data), row.id).toEqual(toAuditLog(row))
      expect(columns).toEqual({
        id: row.id,
        tenant_id: row.tenant_id,
        seq: row.seq,
        action: row.action,
        created_at: row.created_at,
        resource_type: row.resource_type,
        resource_id: row.resource_id,
      })
    }
  })

  it('gives every list page, sort, search and filter the page the JavaScript rendering gives', async () => {
    const queries = [
      {},
      { page_limit: 2 },
      { sort: '-name', page_limit: 3 },
      { sort: 'updated_at' },
      { q: '2' },
      { owner_id: teamId },
    ]
    for (const [family, service] of families()) {
      for (const query of queries) {
        let cursor: string | undefined
        do {
          const q = { ...query, ...(cursor && { page_after: cursor }) }
          const fromDb = JSON.parse((await service.listJson(ctx, q as never)).toString())
          expect(fromDb, `${family} ${JSON.stringify(q)}`).toEqual(await service.list(ctx, q as never))
          cursor = fromDb.pagination.next_cursor ?? undefined
        } while (cursor)
      }
    }
  })

  it('gives every audit log page, sort, search and filter, and the NDJSON export, the records the JavaScript rendering gives', async () => {
    const [useCase] = ids.use_cases
    const queries = [
      {},
      { page_limit: 2 },
      { sort: '-created_at', page_limit: 3 },
      { sort: 'created_at', page_limit: 4 },
      { resource_type: ['model', 'vendor'], page_limit: 3 },
      { action: 'use_case.updated' },
      { use_case_id: useCase },
      // Common enough to fill a page from the records in order, and rare: both of PostgreSQL's search steps.
      { q: 'use case', page_limit: 2 },
      { q: 'Vendor 3' },
      { q: 'ünïcödé', sort: '-created_at' },
      { start_time: '2020-01-01T00:00:00Z', end_time: '2100-01-01T00:00:00Z', page_limit: 5 },
    ]
    for (const query of queries) {
      const objects = []
      let cursor: string | undefined
      do {
        const q = { ...query, ...(cursor && { page_after: cursor }) }
        const fromDb = JSON.parse((await services.auditLogs.listJson(ctx, q as never)).toString())
        const page = await services.auditLogs.list(ctx, q as never)
        expect(fromDb, JSON.stringify(q)).toEqual(page)
        objects.push(...page.items)
        cursor = fromDb.pagination.next_cursor ?? undefined
      } while (cursor)
      expect(objects.length, JSON.stringify(query)).toBeGreaterThan(0)
      const { page_limit: _limit, ...filter } = query as { page_limit?: number }
      let exported = ''
      for await (const chunk of services.auditLogs.export(ctx, { ...filter, format: 'ndjson' } as never))
        exported += chunk
      const lines = exported.split('\n')
      expect(lines.pop()).toBe('')
      expect(
        lines.map((line) => JSON.parse(line)),
        JSON.stringify(query),
      ).toEqual(objects)
    }
  })

  it('answers a PATCH with the item a GET then gives, whether the body names row fields only or decorated ones', async () => {
    const write = t.as('acme', 'write')
    const id = ids.use_cases[2]
    for (const body of [
      { description: 'Only a row field' },
      { name: 'Renamed', regions: ['APAC'] },
      { owner: { owner_id: teamId } },
      { owner: null, questionnaire_ids: ['ALPHA+1'] },
    ]) {
      const patched = await write({ method: 'PATCH', url: `/use_cases/${id}`, payload: body })
      expect(patched.statusCode, patched.body).toBe(200)
      expect(patched.json(), JSON.stringify(body)).toEqual(
        (await write({ method: 'GET', url: `/use_cases/${id}` })).json(),
      )
    }
  })

  it('answers a create with the item a GET then gives, whether the body names row fields only or decorated ones', async () => {
    const write = t.as('acme', 'write')
    for (const body of [
      { name: 'Row fields only', regions: ['EU'] },
      { name: 'Owned and attached', owner: { owner_id: teamId }, questionnaire_ids: ['ZETA+1'] },
    ]) {
      const created = await write({ method: 'POST', url: '/use_cases', payload: body })
      expect(created.statusCode, created.body).toBe(201)
      expect(created.json(), JSON.stringify(body)).toEqual(
        (await write({ method: 'GET', url: `/use_cases/${created.json().id}` })).json(),
      )
    }
  })

  it('sends the rendered JSON over HTTP as JSON, with its ETag, and 404 for a missing record', async () => {
    const read = t.as('acme', 'read')
    const one = await read({ method: 'GET', url: `/use_cases/${ids.use_cases[1]}` })
    expect(one.statusCode).toBe(200)
    expect(one.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(one.headers.etag).toBeDefined()
    expect(one.json()).toEqual(await services.useCases.get(ctx, ids.use_cases[1]))
    const page = await read({ method: 'GET', url: '/models?page_limit=2' })
    expect(page.json()).toEqual(await services.models.list(ctx, { page_limit: 2 } as never))
    const missing = await read({ method: 'GET', url: '/vendors/vnd_00000000000000000000000000' })
    expect(missing.statusCode).toBe(404)
    expect(missing.headers['content-type']).toContain('application/problem+json')
  })

  it('sends pages mixing ASCII and other text byte-exact, rendered, kept and answered from the read cache', async () => {
    const write = t.as('acme', 'write')
    const plain = await write({ method: 'POST', url: '/vendors', payload: { name: 'Plain ASCII vendor' } })
    expect(plain.statusCode, plain.body).toBe(201)
    const pageIds = [plain.json().id, ...ids.vendors]
    const exact = (res: { rawPayload: Buffer; headers: Record<string, unknown> }) => {
      expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length)
      return JSON.parse(res.rawPayload.toString('utf8'))
    }
    // First read renders the items, the second finds them kept, the third is the read cache's answer.
    for (let round = 0; round < 3; round++) {
      const page = exact(await write({ method: 'GET', url: '/vendors?page_limit=100' }))
      expect(page).toEqual(await services.vendors.list(ctx, { page_limit: 100 } as never))
      expect(page.items.map((v: { id: string }) => v.id).sort()).toEqual([...pageIds].sort())
      for (const id of pageIds)
        expect(exact(await write({ method: 'GET', url: `/vendors/${id}` }))).toEqual(
          await services.vendors.get(ctx, id),
        )
    }
  })
})
