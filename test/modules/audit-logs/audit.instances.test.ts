import { createRequire } from 'node:module'
import type pgTypes from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createDatabase } from '../../../src/db/create-db.js'
import { AuditAppender, type AuditedDatabase, withAudit } from '../../../src/shared/audit-append.js'
import { systemCtx } from '../../../src/shared/context.js'
import { findForChange, runMutation } from '../../../src/shared/mutation.js'
import { POSTGRES_URL, startTestApp, type TestApp } from '../../helpers/harness.js'

// Two processes appending to one tenant's audit chain on PostgreSQL, in turns and at once: every record of both is
// kept, in one unbroken chain, whichever process appended last.
const suite = POSTGRES_URL ? describe : describe.skip
suite(`audit appends of two processes on one PostgreSQL chain${POSTGRES_URL ? '' : ' — skipped: DATABASE_URL does not point at PostgreSQL'}`, () => {
  let t: TestApp
  let other: AuditedDatabase

  beforeAll(async () => {
    t = await startTestApp('postgres')
    // Another process's connections, writing under the same chain key.
    const own = createDatabase(t.config.databaseUrl)
    other = withAudit(own, new AuditAppender(own, t.deps.database.audit.keys))
  })
  afterAll(async () => {
    await other?.close()
    await t?.close()
  })

  const createVendor = async (tenant: string, name: string) =>
    expect((await t.as(tenant, 'write')({ method: 'POST', url: '/vendors', payload: { name } })).statusCode).toBe(201)
  const noteFromOther = (tenant: string, note: string) =>
    runMutation(other, systemCtx(tenant), async () => ({
      result: undefined,
      audit: { action: 'tenant.noted', resourceType: 'tenant', resourceId: tenant, resourceName: note },
    }))
  /** The verdict of the chain check, and the chain it checked (the check's own read key is audited before it). */
  const verified = async (tenant: string) => {
    const verdict = (await t.as(tenant, 'read')({ method: 'GET', url: '/audit_logs/verify' })).json()
    return { verdict, records: await chain(tenant) }
  }
  const chain = (tenant: string) =>
    t.deps.database.db
      .selectFrom('audit_logs')
      .select(['seq', 'action', 'resource_name', 'prev_hash', 'hash'])
      .where('tenant_id', '=', tenant)
      .orderBy('seq')
      .execute()

  it('appends after the other process has, at the head it left, and the chain verifies', async () => {
    const tenant = 'interleaved'
    await createVendor(tenant, 'first')
    await createVendor(tenant, 'second')
    await noteFromOther(tenant, 'other one')
    // The head this process last left is no longer the head.
    await createVendor(tenant, 'third')
    await createVendor(tenant, 'fourth')
    await noteFromOther(tenant, 'other two')
    await createVendor(tenant, 'fifth')

    const { verdict, records } = await verified(tenant)
    expect(verdict).toMatchObject({ ok: true, first_bad_id: null, checked: records.length })
    // The tenant's own provisioning and its key came first.
    const names = records
      .filter((r) => r.action === 'vendor.created' || r.action === 'tenant.noted')
      .map((r) => r.resource_name)
    expect(names).toEqual(['first', 'second', 'other one', 'third', 'fourth', 'other two', 'fifth'])
    expect(records.map((r) => Number(r.seq))).toEqual(records.map((_r, i) => i + 1))
    for (let i = 1; i < records.length; i++) expect(records[i].prev_hash).toBe(records[i - 1].hash)
    const head = await t.deps.database.db
      .selectFrom('tenants')
      .select(['audit_seq', 'audit_head'])
      .where('id', '=', tenant)
      .executeTakeFirstOrThrow()
    expect([Number(head.audit_seq), head.audit_head]).toEqual([records.length, records.at(-1)!.hash])
  })

  it('appends at the head it left in one statement, and at the head as it is once the other process appended', async () => {
    const tenant = 'known-head'
    await createVendor(tenant, 'learns the head')
    const pg = createRequire(import.meta.url)('pg') as typeof pgTypes
    const sent = vi.spyOn(pg.Client.prototype, 'query')
    const statements = () => {
      const texts = sent.mock.calls.map(([query]) =>
        typeof query === 'string' ? query : (query as { text: string }).text,
      )
      sent.mockClear()
      return {
        headReads: texts.filter((text) =>
          /^select "audit_seq", "audit_head" from "tenants" .* for no key update$/.test(text),
        ).length,
        ifHead: texts.filter((text) => text.startsWith('with head as')).length,
        appends: texts.filter((text) => text.startsWith('with "appended" as')).length,
      }
    }
    try {
      await createVendor(tenant, 'at the head it left')
      expect(statements()).toEqual({ headReads: 0, ifHead: 1, appends: 0 })
      await noteFromOther(tenant, 'moved by the other')
      statements()
      await createVendor(tenant, 'after the other')
      expect(statements()).toEqual({ headReads: 0, ifHead: 1, appends: 1 })
      await createVendor(tenant, 'at the head it left again')
      expect(statements()).toEqual({ headReads: 0, ifHead: 1, appends: 0 })
    } finally {
      sent.mockRestore()
    }
    const { verdict, records } = await verified(tenant)
    expect(verdict).toMatchObject({ ok: true, first_bad_id: null, checked: records.length })
    const names = records
      .filter((r) => r.action === 'vendor.created' || r.action === 'tenant.noted')
      .map((r) => r.resource_name)
    expect(names).toEqual([
      'learns the head',
      'at the head it left',
      'moved by the other',
      'after the other',
      'at the head it left again',
    ])
    for (let i = 1; i < records.length; i++) expect(records[i].prev_hash).toBe(records[i - 1].hash)
  })

  it('keeps every record of both processes writing one tenant at once', async () => {
    const tenant = 'concurrent'
    await createVendor(tenant, 'start')
    await Promise.all([
      ...Array.from({ length: 30 }, (_v, i) => createVendor(tenant, `ours ${i}`)),
      ...Array.from({ length: 30 }, (_v, i) => noteFromOther(tenant, `theirs ${i}`)),
    ])
    await createVendor(tenant, 'end')
    const { verdict, records } = await verified(tenant)
    expect(verdict).toMatchObject({ ok: true, first_bad_id: null, checked: records.length })
    expect(
      records.filter((r) => r.resource_name?.startsWith('ours ') || r.resource_name?.startsWith('theirs ')),
    ).toHaveLength(60)
    expect(records.map((r) => Number(r.seq))).toEqual(records.map((_r, i) => i + 1))
  })

  it("locks a row read to change it, so a second process's change of it waits and starts from the first's", async () => {
    const tenant = 'locks'
    await createVendor(tenant, 'v')
    const { id } = await t.deps.database.db
      .selectFrom('vendors')
      .select('id')
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow()
    // Each appends a letter to the name it read; with the read unlocked, both would read "v" and one letter be lost.
    const append = (database: AuditedDatabase, letter: string) =>
      runMutation(database, systemCtx(tenant), async (tx) => {
        const before = await findForChange(tx, 'vendors', tenant, id)
        await new Promise((resolve) => setTimeout(resolve, 100))
        await tx
          .updateTable('vendors')
          .set({ name: `${before?.name}${letter}` })
          .where('tenant_id', '=', tenant)
          .where('id', '=', id)
          .execute()
        return { result: undefined, audit: [] }
      })
    await Promise.all([append(t.deps.database, 'a'), append(other, 'b')])
    const { name } = await t.deps.database.db
      .selectFrom('vendors')
      .select('name')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    expect(['vab', 'vba']).toContain(name)
  })
})
