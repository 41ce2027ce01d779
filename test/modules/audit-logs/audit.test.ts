import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { systemCtx } from '../../../src/shared/context.js'
import { auditHash } from '../../../src/shared/audit-chain.js'
import { runMutation } from '../../../src/shared/mutation.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

describeEachDialect('audit log: one record per mutation, in its transaction', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t.close())

  const auditRows = (tenant: string) =>
    t.deps.database.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenant).orderBy('seq').execute()

  it('matches successful mutations one to one, and failed requests write nothing', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            op: fc.constantFrom(
              'create',
              'create-dup',
              'create-bad',
              'update',
              'update-bad',
              'delete',
              'delete-missing',
            ),
            pick: fc.nat(),
          }),
          { maxLength: 20 },
        ),
        async (steps) => {
          const tenant = `audit-${run++}`
          const req = t.as(tenant, 'write')
          const before = (await auditRows(tenant)).length
          const live: { id: string; name: string }[] = []
          const expected: { action: string; resource_id: string }[] = []
          let n = 0
          for (const { op, pick } of steps) {
            const target = live.length ? live[pick % live.length] : undefined
            if (op === 'create') {
              const res = await req({ method: 'POST', url: '/use_cases', payload: { name: `uc ${n++}` } })
              expect(res.statusCode).toBe(201)
              live.push(res.json())
              expected.push({ action: 'use_case.created', resource_id: res.json().id })
            } else if (op === 'create-dup' && target) {
              expect(
                (await req({ method: 'POST', url: '/use_cases', payload: { name: target.name.toUpperCase() } }))
                  .statusCode,
              ).toBe(422)
            } else if (op === 'create-bad') {
              expect((await req({ method: 'POST', url: '/use_cases', payload: { name: '' } })).statusCode).toBe(422)
            } else if (op === 'update' && target) {
              const res = await req({
                method: 'PATCH',
                url: `/use_cases/${target.id}`,
                payload: { description: `d${n++}` },
              })
              expect(res.statusCode).toBe(200)
              expected.push({ action: 'use_case.updated', resource_id: target.id })
            } else if (op === 'update-bad' && target) {
              expect(
                (
                  await req({
                    method: 'PATCH',
                    url: `/use_cases/${target.id}`,
                    payload: { risk_category_level: 'huge' },
                  })
                ).statusCode,
              ).toBe(422)
            } else if (op === 'delete' && target) {
              expect((await req({ method: 'DELETE', url: `/use_cases/${target.id}` })).statusCode).toBe(204)
              live.splice(live.indexOf(target), 1)
              expected.push({ action: 'use_case.deleted', resource_id: target.id })
            } else if (op === 'delete-missing') {
              expect(
                (await req({ method: 'DELETE', url: '/use_cases/uc_00000000000000000000000000' })).statusCode,
              ).toBe(404)
            }
          }
          const rows = (await auditRows(tenant)).slice(before).filter((r) => r.resource_type === 'use_case')
          expect(rows.map((r) => ({ action: r.action, resource_id: r.resource_id }))).toEqual(expected)
        },
      ),
      { numRuns: 15, seed: 7 },
    )
  }, 120_000)

  it('rolls the change back when its audit record cannot be written', async () => {
    await t.token('rollback', 'write')
    const ghost = systemCtx('no-such-tenant')
    await expect(
      runMutation(t.deps.database, ghost, async (tx) => {
        await tx
          .insertInto('use_cases')
          .values({
            id: 'uc_0000000000000000000000000r',
            tenant_id: 'rollback',
            name: 'ghost',
            name_key: 'ghost',
            description: null,
            ai_type: null,
            system_type: null,
            risk_category_level: null,
            regions: '[]',
            industries: '[]',
            source: null,
            owner_id: null,
            owner_type: null,
            workflow_stage_id: null,
            workflow_stage_step: null,
            creator_id: null,
            created_at: new Date().toISOString(),
            updated_at: new Date().toISOString(),
          })
          .execute()
        return {
          result: null,
          audit: { action: 'use_case.created', resourceType: 'use_case', resourceId: 'uc_0000000000000000000000000r' },
        }
      }),
    ).rejects.toThrow()
    const row = await t.deps.database.db
      .selectFrom('use_cases')
      .select('id')
      .where('id', '=', 'uc_0000000000000000000000000r')
      .executeTakeFirst()
    expect(row).toBeUndefined()
  })

  it('chains each tenant’s records by hash, in sequence', async () => {
    const req = t.as('chain', 'write')
    for (let i = 0; i < 5; i++) await req({ method: 'POST', url: '/use_cases', payload: { name: `chain ${i}` } })
    const rows = await auditRows('chain')
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_r, i) => i + 1))
    let prev = '0'.repeat(64)
    for (const row of rows) {
      expect(row.prev_hash).toBe(prev)
      const { hash, ...rest } = row
      expect(rest.chain_key_id).toBe(t.deps.database.audit.keys.chain.id)
      expect(auditHash(rest, t.deps.database.audit.keys)).toBe(hash)
      prev = hash
    }
  })

  it('appends the thousands of records of one mutation (as an apply joins them) on one chain', async () => {
    const bulk = 3500
    await t.token('bulk', 'write')
    const before = (await auditRows('bulk')).length
    for (let round = 0; round < 2; round++) {
      await runMutation(t.deps.database, systemCtx('bulk'), async () => ({
        result: null,
        audit: Array.from({ length: bulk }, (_, i) => ({
          action: 'use_case.updated',
          resourceType: 'use_case',
          resourceId: `uc_bulk_${round}_${i}`,
        })),
      }))
    }
    const rows = await auditRows('bulk')
    expect(rows.length).toBe(before + 2 * bulk)
    expect(rows.map((r) => Number(r.seq))).toEqual(rows.map((_r, i) => i + 1))
    let prev = '0'.repeat(64)
    for (const row of rows) {
      expect(row.prev_hash).toBe(prev)
      const { hash, ...rest } = row
      expect(auditHash(rest, t.deps.database.audit.keys)).toBe(hash)
      prev = hash
    }
    const tenant = await t.deps.database.db
      .selectFrom('tenants')
      .select(['audit_seq', 'audit_head'])
      .where('id', '=', 'bulk')
      .executeTakeFirstOrThrow()
    expect(Number(tenant.audit_seq)).toBe(rows.length)
    expect(tenant.audit_head).toBe(prev)
  }, 60_000)

  it('offers no route that changes or deletes audit records', async () => {
    const admin = t.as('chain', 'admin')
    const [first] = (await admin({ method: 'GET', url: '/audit_logs' })).json().items
    expect((await admin({ method: 'DELETE', url: `/audit_logs/${first.id}` })).statusCode).toBe(405)
    expect((await admin({ method: 'PATCH', url: `/audit_logs/${first.id}`, payload: {} })).statusCode).toBe(405)
    expect((await admin({ method: 'GET', url: `/audit_logs/${first.id}` })).json()).toEqual(first)
  })

  it('filters by action, resource type and resource id, and hides other tenants', async () => {
    const req = t.as('filter-audit', 'write')
    const uc = (await req({ method: 'POST', url: '/use_cases', payload: { name: 'Filtered' } })).json()
    await req({ method: 'PATCH', url: `/use_cases/${uc.id}`, payload: { description: 'changed' } })
    const get = async (q: string) =>
      (await req({ method: 'GET', url: `/audit_logs?${q}` })).json().items.map((a: { action: string }) => a.action)
    expect(await get(`resource_id=${uc.id}`)).toEqual(['use_case.created', 'use_case.updated'])
    expect(await get('action=use_case.updated')).toEqual(['use_case.updated'])
    expect(await get('action=use_case.updated&action=use_case.created')).toEqual([
      'use_case.created',
      'use_case.updated',
    ])
    expect(await get('resource_type=use_case&sort=-created_at')).toEqual(['use_case.updated', 'use_case.created'])
    expect(await get('q=filtered')).toEqual(['use_case.created', 'use_case.updated'])
    const theirs = (await t.as('chain', 'read')({ method: 'GET', url: `/audit_logs?resource_id=${uc.id}` })).json()
      .items
    expect(theirs).toEqual([])
    const [one] = (await req({ method: 'GET', url: `/audit_logs?resource_id=${uc.id}` })).json().items
    expect((await t.as('chain', 'read')({ method: 'GET', url: `/audit_logs/${one.id}` })).statusCode).toBe(404)
  })
})
