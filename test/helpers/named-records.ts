import { afterAll, beforeAll, expect, it } from 'vitest'
import type { DialectName } from '../../src/db/create-db.js'
import type { Role } from '../../src/shared/context.js'
import { startTestApp, type TestApp } from './harness.js'

export interface NamedRecordSpec {
  collection: string
  /** Extra fields a valid create body needs besides `name`. */
  extra?: Record<string, unknown>
  /** The role that creates and renames (default `write`). */
  writer?: Role
}

/**
 * Rules every named catalog collection shares beyond the contract: case-insensitive unique names
 * (422 already_exists with the existing id, on create and on rename), `q` search, and `sort` by name in both directions.
 */
export function namedRecordTests(dialect: DialectName, spec: NamedRecordSpec): void {
  let t: TestApp
  const base = spec.collection
  const writer = spec.writer ?? 'write'
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  const create = async (tenant: string, name: string) => {
    const res = await t.as(tenant, writer)({ method: 'POST', url: base, payload: { name, ...spec.extra } })
    expect(res.statusCode, res.body).toBe(201)
    return res.json() as { id: string; name: string }
  }

  it('answers 422 already_exists with the existing id on a case-insensitive duplicate name, on create and on rename, and allows it in another tenant', async () => {
    const first = await create('acme', 'Fraud Shield')
    const dup = await t.as(
      'acme',
      writer,
    )({ method: 'POST', url: base, payload: { name: '  fraud SHIELD ', ...spec.extra } })
    expect(dup.statusCode).toBe(422)
    expect(dup.json()).toMatchObject({
      code: 'already_exists',
      existing_id: first.id,
      errors: [{ field: 'name', message: expect.stringContaining('already exists') }],
    })
    const other = await create('acme', 'Other name')
    const rename = await t.as(
      'acme',
      writer,
    )({ method: 'PATCH', url: `${base}/${other.id}`, payload: { name: 'FRAUD shield' } })
    expect(rename.statusCode).toBe(422)
    expect(rename.json().existing_id).toBe(first.id)
    expect((await t.as('acme', 'read')({ method: 'GET', url: `${base}/${other.id}` })).json().name).toBe('Other name')
    const audit = await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs?resource_id=${other.id}` })
    expect(audit.json().items).toHaveLength(1)
    await create('globex', 'fraud shield')
    // Renaming to a different case of its own name is fine.
    const recase = await t.as(
      'acme',
      writer,
    )({ method: 'PATCH', url: `${base}/${other.id}`, payload: { name: 'OTHER NAME' } })
    expect(recase.statusCode).toBe(200)
    expect(recase.json().name).toBe('OTHER NAME')
  })

  it('searches names case-insensitively with q, wildcards taken literally, and sorts by name both ways', async () => {
    for (const name of ['Beta_search', 'alpha search', 'GAMMA SEARCH', 'unrelated']) await create('finder', name)
    const read = t.as('finder', 'read')
    const names = async (query: string) =>
      (await read({ method: 'GET', url: `${base}?${query}` })).json().items.map((r: { name: string }) => r.name)
    expect(await names('q=SEARCH&sort=name')).toEqual(['alpha search', 'Beta_search', 'GAMMA SEARCH'])
    expect(await names('q=search&sort=-name')).toEqual(['GAMMA SEARCH', 'Beta_search', 'alpha search'])
    expect(await names('q=a_s')).toEqual(['Beta_search'])
    expect(await names('sort=-created_at&page_limit=1')).toEqual(['unrelated'])
    const byName = await read({ method: 'GET', url: `${base}?sort=name&page_limit=2` })
    const next = await read({
      method: 'GET',
      url: `${base}?sort=name&page_limit=2&page_after=${byName.json().pagination.next_cursor}`,
    })
    expect(next.json().items.map((r: { name: string }) => r.name)).toEqual(['GAMMA SEARCH', 'unrelated'])
    expect((await read({ method: 'GET', url: `${base}?sort=bogus` })).statusCode).toBe(400)
  })
}
