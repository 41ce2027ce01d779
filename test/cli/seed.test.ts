import { afterAll, beforeAll, expect, it } from 'vitest'
import { seed } from '../../src/cli/seed.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

describeEachDialect('aigov seed', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t.close())

  it('loads use cases with an audit record for every change, keeping the hash chain valid', async () => {
    const progress: number[] = []
    const result = await seed(t.deps.database, [], {
      tenant: 'seeded',
      useCases: 30,
      auditLogs: 75,
      progress: (done) => progress.push(done),
    })
    expect(result).toEqual({ useCases: 30, auditLogs: 75 })
    expect(progress[progress.length - 1]).toBe(105)

    const read = t.as('seeded', 'read')
    const all = []
    let cursor: string | null = null
    do {
      const page: any = (
        await read({ method: 'GET', url: `/use_cases?page_limit=100&q=seeded${cursor ? `&page_after=${cursor}` : ''}` })
      ).json()
      all.push(...page.items)
      cursor = page.pagination.next_cursor
    } while (cursor)
    expect(all).toHaveLength(30)

    const audit = await t.deps.database.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('tenant_id', '=', 'seeded')
      .where('resource_type', '=', 'use_case')
      .orderBy('seq')
      .execute()
    expect(audit).toHaveLength(75)
    // Replaying each record's description change gives every row's final description.
    const replayed = new Map<string, string>()
    for (const row of audit)
      replayed.set(row.resource_id!, (JSON.parse(row.changes!) as { description: [unknown, string] }).description[1])
    for (const useCase of all) expect(useCase.description).toBe(replayed.get(useCase.id))
    expect(all.every((u) => u.workflow_stage_step === 'assessment')).toBe(true)

    expect((await read({ method: 'GET', url: '/audit_logs/verify' })).json()).toMatchObject({ ok: true })
    // A second run adds to the same tenant.
    await seed(t.deps.database, [], { tenant: 'seeded', useCases: 5, auditLogs: 0, progress: () => undefined })
    expect((await read({ method: 'GET', url: '/audit_logs/verify' })).json()).toMatchObject({ ok: true })
  })
})
