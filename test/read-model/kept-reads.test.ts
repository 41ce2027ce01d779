import { afterAll, beforeAll, expect, it } from 'vitest'
import { createServices } from '../../src/services.js'
import { sql } from 'kysely'
import { keptRead } from '../../src/read-model/kept-reads.js'
import { systemCtx } from '../../src/shared/context.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

// A group transaction keeps a tenant's start stage and custom field definitions for its members (src/read-model):
// a member must still see what an earlier member of its group changed, and never what a rolled-back one did. (The
// start stage is system-managed: no request changes it.)
// Writes started in one turn of the event loop commit as one group.

describeEachDialect('reads kept for a group transaction', (dialect) => {
  let t: TestApp
  let services: ReturnType<typeof createServices>
  const ctx = systemCtx('acme')

  beforeAll(async () => {
    t = await startTestApp(dialect)
    services = createServices(t.deps)
    // The tenant is made on its first request; the rolled-back member below copies this field.
    expect(
      (
        await t.as(
          'acme',
          'admin',
        )({ method: 'POST', url: '/custom_fields', payload: { name: 'Optional', type: 'string' } })
      ).statusCode,
    ).toBe(201)
  })
  afterAll(async () => t?.close())

  it('sees a custom field made required by an earlier member of the group', async () => {
    const [before, field, after] = await Promise.allSettled([
      services.useCases.create(ctx, { name: 'Before the field' } as never),
      services.customFields.create(ctx, { name: 'Cost centre', type: 'string', required: true } as never),
      services.useCases.create(ctx, { name: 'After the field' } as never),
    ])
    expect(before.status).toBe('fulfilled')
    expect(field.status).toBe('fulfilled')
    expect(after.status).toBe('rejected')
    expect((after as PromiseRejectedResult).reason.message).toContain('Cost centre')
    await services.customFields.delete(ctx, (field as PromiseFulfilledResult<{ id: string }>).value.id)
  })

  it('forgets what a member rolled back to its savepoint had written', async () => {
    const { database } = t.deps
    const count = (tx: Parameters<Parameters<typeof database.groupedTransaction>[0]>[0]) =>
      keptRead(
        tx,
        'custom_fields',
        'acme',
        async () =>
          (await tx.selectFrom('custom_fields').select('id').where('tenant_id', '=', 'acme').execute()).length,
      )
    const results = await Promise.allSettled([
      database.groupedTransaction(count, { group: 'acme' }),
      database.groupedTransaction(
        async (tx) => {
          await tx
            .insertInto('custom_fields')
            .values({
              ...(await tx
                .selectFrom('custom_fields')
                .selectAll()
                .where('tenant_id', '=', 'acme')
                .executeTakeFirstOrThrow()),
              id: 'cf_rolled_back',
              name: 'Gone',
              name_key: 'gone',
            })
            .execute()
          throw new Error(`saw ${await count(tx)}`)
        },
        { group: 'acme' },
      ),
      database.groupedTransaction(count, { group: 'acme' }),
    ])
    const [first, failed, last] = results
    expect((failed as PromiseRejectedResult).reason.message).toBe(
      `saw ${(first as PromiseFulfilledResult<number>).value + 1}`,
    )
    expect((last as PromiseFulfilledResult<number>).value).toBe((first as PromiseFulfilledResult<number>).value)
  })

  it("forgets a table's kept reads on any write to it through the transaction, and only on those", async () => {
    let reads = 0
    const read = (tx: Parameters<Parameters<typeof t.deps.database.groupedTransaction>[0]>[0]) =>
      keptRead(tx, 'custom_fields', 'acme', async () => ++reads)
    const seen = await t.deps.database.groupedTransaction(
      async (tx) => {
        const out = [await read(tx), await read(tx)]
        // Another table's write keeps it; a builder's and an SQL text's write of the table forget it.
        await tx.updateTable('vendors').set({ name: 'x' }).where('tenant_id', '=', 'nobody').execute()
        out.push(await read(tx))
        await tx.updateTable('custom_fields').set({ name: 'x' }).where('tenant_id', '=', 'nobody').execute()
        out.push(await read(tx), await read(tx))
        await sql`update custom_fields set name = 'x' where tenant_id = 'nobody'`.execute(tx)
        out.push(await read(tx))
        await tx.deleteFrom('custom_fields').where('tenant_id', '=', 'nobody').execute()
        out.push(await read(tx))
        return out
      },
      { group: 'acme' },
    )
    expect(seen).toEqual([1, 1, 1, 2, 2, 3, 4])
    // Outside a group nothing is kept.
    expect([await read(t.deps.database.db), await read(t.deps.database.db)]).toEqual([5, 6])
  })
})
