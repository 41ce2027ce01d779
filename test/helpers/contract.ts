import { afterAll, beforeAll, expect, it } from 'vitest'
import type { DialectName } from '../../src/db/create-db.js'
import type { Role } from '../../src/shared/context.js'
import { startTestApp, type TestApp } from './harness.js'

export interface ContractSpec {
  /** Collection path under the prefix, e.g. `/use_cases`. */
  collection: string
  /** Audit resource_type, e.g. `use_case`. */
  resourceType: string
  idPrefix: string
  /** A valid create body; `i` makes it unique. */
  validBody(i: number): Record<string, unknown>
  /** A valid PATCH body, or null when the family has no update. */
  updateBody: Record<string, unknown> | null
  deletable: boolean
  /** Seeds whatever the family needs before records can be created (per tenant). */
  prepare?(t: TestApp, tenant: string): Promise<void>
  /** The role that creates, updates and deletes (default `write`; custom field definitions need `admin`). */
  writer?: Role
}

/**
 * The rules every collection shares: authentication, tenant isolation, pagination, strict bodies,
 * and an audit record for each write. Call inside a describe block.
 */
export function contractTests(dialect: DialectName, spec: ContractSpec): void {
  let t: TestApp
  const base = spec.collection
  const writer = spec.writer ?? 'write'

  beforeAll(async () => {
    t = await startTestApp(dialect)
    await spec.prepare?.(t, 'acme')
    await spec.prepare?.(t, 'globex')
  })
  afterAll(async () => t?.close())

  const create = async (tenant: string, body: Record<string, unknown>) => {
    const res = await t.as(tenant, writer)({ method: 'POST', url: base, payload: body })
    expect(res.statusCode, res.body).toBe(201)
    return res.json() as { id: string }
  }

  it('rejects requests without a valid token (401 problem)', async () => {
    for (const [method, url] of [
      ['GET', base],
      ['POST', base],
      ['GET', `${base}/${spec.idPrefix}_00000000000000000000000000`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url: `/api/v1/integration${url}`,
        payload: method === 'POST' ? spec.validBody(0) : undefined,
      })
      expect(res.statusCode).toBe(401)
      expect(res.headers['content-type']).toContain('application/problem+json')
      const bad = await t.app.inject({
        method,
        url: `/api/v1/integration${url}`,
        headers: { authorization: 'Bearer not-a-token' },
      })
      expect(bad.statusCode).toBe(401)
    }
  })

  it('creates with 201 + Location, and writes one audit record', async () => {
    const res = await t.as('acme', writer)({ method: 'POST', url: base, payload: spec.validBody(1) })
    expect(res.statusCode, res.body).toBe(201)
    const record = res.json()
    expect(record.id).toMatch(new RegExp(`^${spec.idPrefix}_[0-9a-z]{26}$`))
    expect(res.headers.location).toBe(`/api/v1/integration${base}/${record.id}`)
    const audit = await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs?resource_id=${record.id}` })
    const actions = audit.json().items.map((a: { action: string }) => a.action)
    expect(actions).toEqual([`${spec.resourceType}.created`])
  })

  it('hides records from other tenants: 404 on read, write and delete, and nothing changes', async () => {
    const record = await create('acme', spec.validBody(2))
    const other = t.as('globex', 'admin')
    expect((await other({ method: 'GET', url: `${base}/${record.id}` })).statusCode).toBe(404)
    if (spec.updateBody)
      expect((await other({ method: 'PATCH', url: `${base}/${record.id}`, payload: spec.updateBody })).statusCode).toBe(
        404,
      )
    if (spec.deletable) expect((await other({ method: 'DELETE', url: `${base}/${record.id}` })).statusCode).toBe(404)
    const list = await other({ method: 'GET', url: `${base}?page_limit=100` })
    expect(list.json().items.map((r: { id: string }) => r.id)).not.toContain(record.id)
    const mine = await t.as('acme', 'read')({ method: 'GET', url: `${base}/${record.id}` })
    expect(mine.statusCode).toBe(200)
    const audit = await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs?resource_id=${record.id}` })
    expect(audit.json().items).toHaveLength(1)
  })

  it('rejects unknown body fields with 422 naming them, and creates nothing', async () => {
    const before = (await t.as('acme', 'read')({ method: 'GET', url: `${base}?page_limit=100` })).json().items.length
    const res = await t.as(
      'acme',
      writer,
    )({ method: 'POST', url: base, payload: { ...spec.validBody(3), bogus_field: 1 } })
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toContainEqual({ field: 'bogus_field', message: 'unknown field' })
    const after = (await t.as('acme', 'read')({ method: 'GET', url: `${base}?page_limit=100` })).json().items.length
    expect(after).toBe(before)
  })

  it('rejects unknown query parameters and bad cursors with 400', async () => {
    const read = t.as('acme', 'read')
    expect((await read({ method: 'GET', url: `${base}?bogus=1` })).statusCode).toBe(400)
    expect((await read({ method: 'GET', url: `${base}?page_after=%%%` })).statusCode).toBe(400)
    expect((await read({ method: 'GET', url: `${base}?page_limit=0` })).statusCode).toBe(400)
    expect((await read({ method: 'GET', url: `${base}?page_limit=101` })).statusCode).toBe(400)
  })

  it('walks every page returning each record exactly once', async () => {
    await spec.prepare?.(t, 'pager')
    const ids: string[] = []
    for (let i = 0; i < 7; i++) ids.push((await create('pager', spec.validBody(100 + i))).id)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const url: string = `${base}?page_limit=3${cursor ? `&page_after=${cursor}` : ''}`
      const page = (await t.as('pager', 'read')({ method: 'GET', url })).json()
      expect(page.items.length).toBeLessThanOrEqual(3)
      seen.push(...page.items.map((r: { id: string }) => r.id))
      cursor = page.pagination.next_cursor
      expect(page.pagination.has_more).toBe(cursor !== null)
    } while (cursor)
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids)
    expect(new Set(seen).size).toBe(seen.length)
  })

  it(`refuses writes to a key below ${writer} (403)`, async () => {
    for (const role of writer === 'admin' ? (['read', 'write'] as const) : (['read'] as const)) {
      const res = await t.as('acme', role)({ method: 'POST', url: base, payload: spec.validBody(4) })
      expect(res.statusCode, role).toBe(403)
    }
  })

  const { updateBody } = spec
  if (updateBody) {
    it('updates with PATCH and audits the change', async () => {
      const record = await create('acme', spec.validBody(5))
      const res = await t.as('acme', writer)({ method: 'PATCH', url: `${base}/${record.id}`, payload: updateBody })
      expect(res.statusCode, res.body).toBe(200)
      const audit = await t.as(
        'acme',
        'read',
      )({ method: 'GET', url: `/audit_logs?resource_id=${record.id}&action=${spec.resourceType}.updated` })
      expect(audit.json().items).toHaveLength(1)
    })
  }

  if (spec.deletable) {
    it('deletes with 204, then answers 404, and audits the deletion', async () => {
      const record = await create('acme', spec.validBody(6))
      const write = t.as('acme', writer)
      expect((await write({ method: 'DELETE', url: `${base}/${record.id}` })).statusCode).toBe(204)
      expect((await write({ method: 'GET', url: `${base}/${record.id}` })).statusCode).toBe(404)
      expect((await write({ method: 'DELETE', url: `${base}/${record.id}` })).statusCode).toBe(404)
      const audit = await t.as(
        'acme',
        'read',
      )({ method: 'GET', url: `/audit_logs?resource_id=${record.id}&action=${spec.resourceType}.deleted` })
      expect(audit.json().items).toHaveLength(1)
    })
  }
}
