import { CompiledQuery, type KyselyPlugin, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seed } from '../../../src/cli/seed.js'
import * as perTenantSearch from '../../../src/db/migrations/2026-11-23T13b-audit-name-search-per-tenant.js'
import { asSql as gramsAsSql } from '../../../src/db/migrations/2026-11-26T13-audit-name-grams-plpgsql.js'
import { csvField } from '../../../src/modules/audit-logs/audit-export.js'
import { createAuditLogsService } from '../../../src/modules/audit-logs/audit-logs.service.js'
import { createTenantsService } from '../../../src/modules/tenants/tenants.service.js'
import { systemCtx } from '../../../src/shared/context.js'
import type { AuditLogListQuery } from '../../../src/modules/audit-logs/audit-logs.schemas.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

/** A small RFC 4180 reader, to check the export parses back to what was written. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++
      else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') row.push(field), (field = '')
    else if (c === '\r' && text[i + 1] === '\n') row.push(field), rows.push(row), (row = []), (field = ''), i++
    else field += c
  }
  return rows
}

/** Until the indexer has taken every audit record of the tenant into its name index (AuditNameIndexer). */
async function namesIndexed(t: TestApp, tenant: string): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 10_000; await new Promise((r) => setTimeout(r, 20))) {
    const row = await t.deps.database.db
      .selectFrom('tenants')
      .select(['audit_seq', 'audit_names_seq'])
      .where('id', '=', tenant)
      .executeTakeFirstOrThrow()
    if (row.audit_names_seq === row.audit_seq) return
  }
  throw new Error(`the names of ${tenant} were not indexed within 10 s`)
}

describeEachDialect('audit log query, export and verification', (dialect) => {
  let t: TestApp
  let ids: string[]
  beforeAll(async () => {
    t = await startTestApp(dialect)
    const write = t.as('aq', 'write')
    ids = []
    // Names cannot hold control characters (422), so no newline here; csvField's own check below covers it.
    for (const name of ['Plain', 'Comma, inside', 'Quote "inside"', 'Line break', 'Ünïcødé ✓']) {
      ids.push((await write({ method: 'POST', url: '/use_cases', payload: { name, description: 'd' } })).json().id)
    }
    await write({ method: 'PATCH', url: `/use_cases/${ids[0]}`, payload: { description: 'changed' } })
    await write({ method: 'DELETE', url: `/use_cases/${ids[1]}` })
  })
  afterAll(async () => t.close())

  it('queries with a JSON filter, a read key is enough', async () => {
    const read = t.as('aq', 'read')
    const res = await read({
      method: 'POST',
      url: '/audit_logs/query',
      payload: { action: ['use_case.updated', 'use_case.deleted'], resource_type: ['use_case'] },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json().items.map((a: { action: string }) => a.action)).toEqual(['use_case.updated', 'use_case.deleted'])
    const byUseCase = await read({
      method: 'POST',
      url: '/audit_logs/query',
      payload: { use_case_id: ids[0], sort: '-created_at' },
    })
    expect(byUseCase.json().items.map((a: { action: string }) => a.action)).toEqual([
      'use_case.updated',
      'use_case.created',
    ])
    const bySource = (await read({ method: 'POST', url: '/audit_logs/query', payload: { source: 'system' } })).json()
      .items
    expect(bySource.every((a: { source: string }) => a.source === 'system')).toBe(true)
    const keyId = bySource.find((a: { action: string }) => a.action === 'api_key.created').resource_id
    const byActor = (
      await read({ method: 'POST', url: '/audit_logs/query', payload: { actor_id: keyId, action: 'use_case.created' } })
    ).json().items
    expect(byActor).toHaveLength(5)
    const future = (
      await read({ method: 'POST', url: '/audit_logs/query', payload: { start_time: '2999-01-01T00:00:00Z' } })
    ).json().items
    expect(future).toEqual([])
    const window = (await read({ method: 'GET', url: '/audit_logs?end_time=2000-01-01T00:00:00Z' })).json().items
    expect(window).toEqual([])
    expect((await read({ method: 'POST', url: '/audit_logs/query', payload: { actions: ['x'] } })).statusCode).toBe(422)
  })

  it('finds resource names by case-insensitive substring, rare or common, short or long', async () => {
    const write = t.as('names', 'write')
    const names = [
      'Credit scoring model',
      'CREDIT limit',
      'Fraud 100% detection',
      'under_score',
      'Quote "q" name',
      'Ünïcødé ✓ check',
    ]
    // Enough records sharing pieces of their names that the index narrows some searches and not others.
    for (let i = 0; i < 560; i++) names.push(`Filler model ${i}`)
    for (const name of names)
      expect((await write({ method: 'POST', url: '/use_cases', payload: { name } })).statusCode).toBe(201)
    const search = async (q: string) => {
      const found: string[] = []
      let after: string | undefined
      do {
        const res = await t.as(
          'names',
          'read',
        )({
          method: 'POST',
          url: '/audit_logs/query',
          payload: { q, action: ['use_case.created'], page_limit: 100, ...(after ? { page_after: after } : {}) },
        })
        expect(res.statusCode).toBe(200)
        found.push(...res.json().items.map((a: { resource_name: string }) => a.resource_name))
        after = res.json().pagination.next_cursor ?? undefined
      } while (after)
      return found
    }
    for (const q of [
      'credit',
      'SCORING MODEL',
      '100%',
      'under_',
      '"q"',
      'nïcødé ✓',
      'filler model 51',
      'model',
      'zz',
      'no such name anywhere',
    ]) {
      expect(await search(q), q).toEqual(names.filter((n) => n.toLowerCase().includes(q.toLowerCase())))
    }
  }, 60_000)

  it('returns exactly the records created at or after start_time', async () => {
    const read = t.as('aq', 'read')
    const all = (await read({ method: 'GET', url: '/audit_logs?page_limit=100' })).json().items as {
      id: string
      created_at: string
    }[]
    for (const pivot of all) {
      const expected = all
        .filter((a) => a.created_at >= pivot.created_at)
        .map((a) => a.id)
        .sort()
      const got = (
        await read({
          method: 'POST',
          url: '/audit_logs/query',
          payload: { start_time: pivot.created_at, page_limit: 100 },
        })
      )
        .json()
        .items.map((a: { id: string }) => a.id)
        .sort()
      expect(got).toEqual(expected)
    }
  })

  it('pages a query with its cursor', async () => {
    const read = t.as('aq', 'read')
    const first = (
      await read({ method: 'POST', url: '/audit_logs/query', payload: { resource_type: 'use_case', page_limit: 4 } })
    ).json()
    expect(first.items).toHaveLength(4)
    const second = (
      await read({
        method: 'POST',
        url: '/audit_logs/query',
        payload: { resource_type: 'use_case', page_limit: 4, page_after: first.pagination.next_cursor },
      })
    ).json()
    expect(second.items).toHaveLength(3)
    expect(second.pagination.has_more).toBe(false)
  })

  it('exports NDJSON with the same filters', async () => {
    const res = await t.as(
      'aq',
      'read',
    )({ method: 'GET', url: '/audit_logs/export?format=ndjson&resource_type=use_case' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('application/x-ndjson')
    expect(res.headers['content-disposition']).toContain('audit-logs.ndjson')
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.action)).toEqual([
      ...Array(5).fill('use_case.created'),
      'use_case.updated',
      'use_case.deleted',
    ])
    const listed = (await t.as('aq', 'read')({ method: 'GET', url: '/audit_logs?resource_type=use_case' })).json().items
    expect(lines).toEqual(listed)
  })

  it('exports CSV that quotes commas, quotes and newlines correctly', async () => {
    const res = await t.as(
      'aq',
      'read',
    )({ method: 'GET', url: '/audit_logs/export?format=csv&action=use_case.created' })
    expect(res.headers['content-type']).toContain('text/csv')
    const rows = parseCsv(res.body)
    expect(rows[0][0]).toBe('id')
    const nameColumn = rows[0].indexOf('resource_name')
    expect(rows.slice(1).map((r) => r[nameColumn])).toEqual([
      'Plain',
      'Comma, inside',
      'Quote "inside"',
      'Line break',
      'Ünïcødé ✓',
    ])
    const changes = JSON.parse(rows[1][rows[0].indexOf('changes')])
    expect(changes.name).toEqual([null, 'Plain'])
    expect(csvField('a"b')).toBe('"a""b"')
    expect(csvField('plain')).toBe('plain')
    expect(csvField('line\nbreak')).toBe('"line\nbreak"')
  })

  it('verifies the hash chain and names a record edited in the database', async () => {
    const read = t.as('aq', 'read')
    const good = (await read({ method: 'GET', url: '/audit_logs/verify' })).json()
    expect(good.ok).toBe(true)
    expect(good.first_bad_id).toBeNull()
    const total = await t.deps.database.db
      .selectFrom('audit_logs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', 'aq')
      .executeTakeFirstOrThrow()
    expect(good.checked).toBe(Number(total.n))

    const victim = (await read({ method: 'GET', url: `/audit_logs?resource_id=${ids[2]}` })).json().items[0]
    await t.deps.database.db
      .updateTable('audit_logs')
      .set({ resource_name: 'Forged' })
      .where('id', '=', victim.id)
      .execute()
    const bad = (await read({ method: 'GET', url: '/audit_logs/verify' })).json()
    expect(bad).toMatchObject({ ok: false, first_bad_id: victim.id })
    // Other tenants' chains are unaffected.
    await t.as('aq-other', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'x' } })
    expect((await t.as('aq-other', 'read')({ method: 'GET', url: '/audit_logs/verify' })).json().ok).toBe(true)
  })

  it('notices records deleted from the end of the chain', async () => {
    const write = t.as('aq-tail', 'write')
    await write({ method: 'POST', url: '/use_cases', payload: { name: 'tail' } })
    const last = await t.deps.database.db
      .selectFrom('audit_logs')
      .select('id')
      .where('tenant_id', '=', 'aq-tail')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow()
    await t.deps.database.db.deleteFrom('audit_logs').where('id', '=', last.id).execute()
    expect((await write({ method: 'GET', url: '/audit_logs/verify' })).json().ok).toBe(false)
  })
})

describeEachDialect('audit queries over a tenant of thousands of records', (dialect) => {
  let t: TestApp
  // Seeded names differ only in their digits ("Seeded use case <run>-0000017"): every piece of three characters
  // is in hundreds of names. Creates come first, then one update per use case.
  const USE_CASES = 3000
  let all: { id: string; resource_name: string }[]
  beforeAll(async () => {
    t = await startTestApp(dialect)
    await seed(t.deps.database, [], {
      tenant: 'many',
      useCases: USE_CASES,
      auditLogs: 2 * USE_CASES,
      progress: () => undefined,
    })
    const rows = await t.deps.database.db
      .selectFrom('audit_logs')
      .select(['id', 'resource_name'])
      .where('tenant_id', '=', 'many')
      .orderBy('id')
      .execute()
    // Every seeded record is named.
    all = rows.map((r) => ({ id: r.id, resource_name: r.resource_name! }))
  }, 120_000)
  afterAll(async () => t?.close())

  const query = (payload: Partial<AuditLogListQuery>) =>
    createAuditLogsService(t.deps).list(systemCtx('many'), { page_limit: 50, ...payload } as AuditLogListQuery)
  const seededName = (i: number) => all[i].resource_name

  it('finds exactly the records holding q, whether q is common, rare with common pieces, or neither', async () => {
    const search = async (q: string) => {
      const found: string[] = []
      let after: string | undefined
      do {
        const page = await query({ q, page_limit: 100, ...(after ? { page_after: after } : {}) })
        found.push(...page.items.map((a) => a.id))
        after = page.pagination.next_cursor ?? undefined
      } while (after)
      return found
    }
    const expected = (q: string) =>
      all.filter((a) => a.resource_name?.toLowerCase().includes(q.toLowerCase())).map((a) => a.id)
    // Common; the whole name of one use case (its create and its update); a hundred names; two thousand names, none
    // among the oldest records (so not found by reading the first pages).
    for (const q of [
      'SEEDED use',
      seededName(0).toUpperCase(),
      seededName(17),
      '-00001',
      '-0001',
      '00017',
      '-0000009',
    ]) {
      const want = expected(q)
      expect(await search(q), q).toEqual(want)
      expect(want.length, q).toBeGreaterThan(0)
    }
    expect(expected(seededName(17))).toHaveLength(2)
  }, 120_000)

  if (dialect !== 'postgres') return

  type PlanNode = {
    'Relation Name'?: string
    'Actual Rows': number
    'Actual Loops': number
    'Rows Removed by Filter'?: number
    'Rows Removed by Index Recheck'?: number
    'Shared Hit Blocks': number
    'Shared Read Blocks': number
    Plans?: PlanNode[]
  }
  /** The statements one query of the tenant runs, each with its plan as PostgreSQL reports running it again. */
  const plans = async (payload: Partial<AuditLogListQuery>) => {
    const { db } = t.deps.database
    // Sub-queries pass through transformQuery too: keep only the statements that ran (they come back with a result).
    const compiled = new Map<unknown, CompiledQuery>()
    const statements: CompiledQuery[] = []
    const capture: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => (
        compiled.set(queryId, db.getExecutor().compileQuery(node, queryId)), node
      ),
      transformResult: async ({ result, queryId }) => (statements.push(compiled.get(queryId)!), result),
    }
    await createAuditLogsService({ ...t.deps, database: { ...t.deps.database, db: db.withPlugin(capture) } }).list(
      systemCtx('many'),
      { page_limit: 50, ...payload } as AuditLogListQuery,
    )
    const explained: { sql: string; plan: PlanNode }[] = []
    for (const statement of statements) {
      const { rows } = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        CompiledQuery.raw(`explain (analyze, buffers, format json) ${statement.sql}`, [...statement.parameters]),
      )
      explained.push({ sql: statement.sql, plan: rows[0]['QUERY PLAN'][0].Plan })
    }
    return explained
  }
  /** Rows the statements of one query read from audit_logs. */
  const rowsRead = async (payload: Partial<AuditLogListQuery>) => {
    const count = (node: PlanNode): number =>
      (node['Relation Name'] === 'audit_logs'
        ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) *
          node['Actual Loops']
        : 0) + (node.Plans ?? []).reduce((sum, child) => sum + count(child), 0)
    return (await plans(payload)).reduce((sum, { plan }) => sum + count(plan), 0)
  }

  it('reads a few pages of records for a rare q whose pieces are all common, not every record', async () => {
    expect(await rowsRead({ q: seededName(0) })).toBeLessThan(all.length / 5)
    expect(await rowsRead({ q: seededName(17), sort: '-created_at' })).toBeLessThan(all.length / 5)
  })

  it('reads one page of records for an action that only the newer half of the records have', async () => {
    expect(await rowsRead({ action: 'use_case.updated' })).toBeLessThanOrEqual(51)
  })

  it('reads as many index pages for a rare q after another tenant wrote thousands of records with like names', async () => {
    // The statements asking the gram indexes (5-character pieces, trigrams for a 4-character q): their plan is
    // fixed, so their pages change only with what they read.
    const pagesRead = async () => {
      let pages = 0
      for (const q of [seededName(17), '0017']) {
        const [asked] = (await plans({ q })).filter((s) => s.sql.includes('@>'))
        pages += asked.plan['Shared Hit Blocks'] + asked.plan['Shared Read Blocks']
      }
      return pages
    }
    const before = await pagesRead()
    await seed(t.deps.database, [], {
      tenant: 'many-neighbour',
      useCases: 1000,
      auditLogs: 2000,
      progress: () => undefined,
    })
    // GIN's pending list held every tenant's new entries and each search read all of it (some 90 pages here).
    expect(await pagesRead()).toBeLessThan(before + 5)
  }, 60_000)

  it('gives every name the keys of the SQL functions the gram indexes were built with', async () => {
    const names = [
      null,
      '',
      'ab',
      'abc',
      'abcd',
      'aaaaaaaaaa',
      'Straße ÄÖÜ ñandú',
      'a:b:c:d:e',
      '  spaced  out  ',
      'x'.repeat(300),
      seededName(17),
    ]
    const same = await t.deps.database.db.connection().execute(async (c) => {
      for (const [fn, size] of [
        ['trigrams', 3],
        ['five_grams', 5],
      ] as const) {
        await gramsAsSql(`pg_temp.sql_${fn}`, size).execute(c)
      }
      const { rows } = await sql<{ name: string | null; same: boolean }>`
        select name,
          audit_name_trigrams('many', name) @> pg_temp.sql_trigrams('many', name) and pg_temp.sql_trigrams('many', name) @> audit_name_trigrams('many', name)
          and audit_name_five_grams('many', name) @> pg_temp.sql_five_grams('many', name) and pg_temp.sql_five_grams('many', name) @> audit_name_five_grams('many', name) as same
        from unnest(${names}::text[]) as name
      `.execute(c)
      return rows
    })
    expect(same).toEqual(names.map((name) => ({ name, same: true })))
  })

  it('records each name once, however many records carry it, and finds a renamed use case by either name', async () => {
    const { db } = t.deps.database
    const names = async () =>
      (
        await sql<{ resource_name: string }>`select resource_name from audit_names where tenant_id = 'many'`.execute(db)
      ).rows.map((r) => r.resource_name)
    // The seed appends behind the service (the CLI): its records' names are there, once each.
    expect((await names()).sort()).toEqual([...new Set(all.map((a) => a.resource_name))].sort())
    const write = t.as('many', 'write')
    const first = `Renamed later ${'ä'.repeat(490)}`
    const created = await write({ method: 'POST', url: '/use_cases', payload: { name: first } })
    expect(created.statusCode, created.body).toBe(201)
    const id = created.json().id as string
    for (let i = 0; i < 3; i++)
      expect(
        (await write({ method: 'PATCH', url: `/use_cases/${id}`, payload: { description: `pass ${i}` } })).statusCode,
      ).toBe(200)
    expect(
      (await write({ method: 'PATCH', url: `/use_cases/${id}`, payload: { name: 'Renamed now' } })).statusCode,
    ).toBe(200)
    expect(
      (await write({ method: 'PATCH', url: `/use_cases/${id}`, payload: { description: 'after the rename' } }))
        .statusCode,
    ).toBe(200)
    await namesIndexed(t, 'many')
    const held = await names()
    expect(held.filter((name) => name === first || name === 'Renamed now').sort()).toEqual(
      ['Renamed now', first].sort(),
    )
    const actions = async (q: string) =>
      (await query({ q, resource_id: id, sort: 'created_at' })).items.map((a) => a.action)
    // Rare enough to be asked of the names' index (not within the first pages of records read in order).
    expect(await actions(first.slice(0, 20))).toEqual([
      'use_case.created',
      'use_case.updated',
      'use_case.updated',
      'use_case.updated',
    ])
    expect(await actions('renamed now')).toEqual(['use_case.updated', 'use_case.updated'])
  })

  it('finds a record as soon as its write is answered, before its name reaches the index, and the same after', async () => {
    const write = t.as('many', 'write')
    const names = async (q: string) => (await query({ q, resource_type: 'vendor' })).items.map((a) => a.resource_name)
    await namesIndexed(t, 'many')
    // The indexer's insert waits while another transaction holds the names table in share mode (reads go on).
    await t.deps.database.db.connection().execute(async (holder) => {
      await sql`begin`.execute(holder)
      try {
        await sql`lock table audit_names in share mode`.execute(holder)
        // Rare: asked of the names' index, not found within the first pages of records read in order.
        for (const name of ['Quokka analytics', 'Quokka insights'])
          expect((await write({ method: 'POST', url: '/vendors', payload: { name } })).statusCode).toBe(201)
        // Another tenant behind at the same time: one round indexes both.
        expect(
          (
            await t.as(
              'many-other',
              'write',
            )({ method: 'POST', url: '/vendors', payload: { name: 'Quokka elsewhere' } })
          ).statusCode,
        ).toBe(201)
        // Past the indexer's delay: its round has started, and waits.
        await new Promise((r) => setTimeout(r, 300))
        const pending = await t.deps.database.db
          .selectFrom('tenants')
          .select(['audit_seq', 'audit_names_seq'])
          .where('id', '=', 'many')
          .executeTakeFirstOrThrow()
        expect(pending.audit_names_seq).toBeLessThan(pending.audit_seq)
        expect(await names('quokka')).toEqual(['Quokka analytics', 'Quokka insights'])
      } finally {
        await sql`rollback`.execute(holder)
      }
    })
    await namesIndexed(t, 'many')
    expect(await names('quokka')).toEqual(['Quokka analytics', 'Quokka insights'])
    await namesIndexed(t, 'many-other')
    const held = await sql<{
      tenant_id: string
      n: number
    }>`select tenant_id, count(*)::int as n from audit_names where resource_name like 'Quokka%' group by tenant_id order by tenant_id`.execute(
      t.deps.database.db,
    )
    expect(held.rows).toEqual([
      { tenant_id: 'many', n: 2 },
      { tenant_id: 'many-other', n: 1 },
    ])
  })
})

describe('audit q on SQLite: each tenant searches its own index', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp('sqlite')
  })
  afterAll(async () => t?.close())

  const names = (tenant: string, q: string) =>
    t
      .as(
        tenant,
        'read',
      )({ method: 'GET', url: `/audit_logs?action=vendor.created&page_limit=100&q=${encodeURIComponent(q)}` })
      .then((res) => res.json().items.map((a: { resource_name: string }) => a.resource_name))
  const addVendors = async (tenant: string, vendorNames: string[]) => {
    for (const name of vendorNames)
      expect((await t.as(tenant, 'write')({ method: 'POST', url: '/vendors', payload: { name } })).statusCode).toBe(201)
  }

  /** The tables the statements of one search by `tenant` read, from the SQL they run. */
  const tablesRead = async (tenant: string, q: string) => {
    const { db } = t.deps.database
    const statements: string[] = []
    const capture: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => (statements.push(db.getExecutor().compileQuery(node, queryId).sql), node),
      transformResult: async ({ result }) => result,
    }
    await createAuditLogsService({ database: { ...t.deps.database, db: db.withPlugin(capture) } }).list(
      systemCtx(tenant),
      { q } as never,
    )
    return new Set(
      statements.flatMap((s) => [...s.matchAll(/\bfrom\s+("[^"]+"|\w+)/gi)].map((m) => m[1].replaceAll('"', ''))),
    )
  }
  const indexed = (tenant: string) => namesIndexed(t, tenant)
  /** The stored bytes of an FTS5 index (its segments and their b-tree). */
  const indexBytes = async (table: string) => {
    const rows = async (shadow: string) =>
      (await sql<Record<string, unknown>>`select * from ${sql.table(shadow)} order by 1`.execute(t.deps.database.db))
        .rows
    return JSON.stringify([await rows(`${table}_data`), await rows(`${table}_idx`)])
  }

  it("reads only the tenant's own index, which another tenant's writes never touch", async () => {
    await addVendors('fts-a', ['Alpha widget', 'Shared word vendor'])
    await indexed('fts-a')
    const read = await tablesRead('fts-a', 'word vendor')
    // The tenant's row gives how far its index reaches.
    expect([...read].sort()).toEqual(['audit_logs', 'fts-a:audit_name_search', 'tenants'])
    const indexes = [...read].filter((table) => table.endsWith(':audit_name_search'))
    const before = await Promise.all(indexes.map(indexBytes))
    // Another tenant writes many records holding the very word searched for.
    await addVendors(
      'fts-b',
      Array.from({ length: 200 }, (_v, i) => `Shared word vendor ${i}`),
    )
    await indexed('fts-b')
    expect(await Promise.all(indexes.map(indexBytes))).toEqual(before)
    expect(await tablesRead('fts-a', 'word vendor')).toEqual(read)
    expect(await names('fts-a', 'word vendor')).toEqual(['Shared word vendor'])
    expect(await names('fts-b', 'word vendor 19')).toEqual([
      'Shared word vendor 19',
      ...Array.from({ length: 10 }, (_v, i) => `Shared word vendor ${190 + i}`),
    ])
    expect(await names('fts-b', 'alpha')).toEqual([])
  })

  it('finds a record as soon as its write is answered, and the same once the indexer has taken it', async () => {
    const search = (q: string) => names('fts-fresh', q)
    await addVendors('fts-fresh', ['Quokka analytics'])
    await indexed('fts-fresh')
    // The indexer takes records 100 ms after their commit: a search right after the write reads them directly.
    await addVendors('fts-fresh', ['Quokka insights', 'Wombat analytics'])
    const pending = await t.deps.database.db
      .selectFrom('tenants')
      .select(['audit_seq', 'audit_names_seq'])
      .where('id', '=', 'fts-fresh')
      .executeTakeFirstOrThrow()
    expect(pending.audit_names_seq).toBeLessThan(pending.audit_seq)
    expect(await search('quokka')).toEqual(['Quokka analytics', 'Quokka insights'])
    expect(await search('analytics')).toEqual(['Quokka analytics', 'Wombat analytics'])
    await indexed('fts-fresh')
    expect(await search('quokka')).toEqual(['Quokka analytics', 'Quokka insights'])
    expect(await search('analytics')).toEqual(['Quokka analytics', 'Wombat analytics'])
    // Each record went into the index once.
    const entries = await sql<{
      n: number
    }>`select count(*) as n from ${sql.table('fts-fresh:audit_name_search')} where ${sql.table('fts-fresh:audit_name_search')} match '"kka"'`.execute(
      t.deps.database.db,
    )
    expect(entries.rows).toEqual([{ n: 2 }])
  })

  it('indexes records appended behind its back (the CLI), and a backlog larger than a search reads directly', async () => {
    await addVendors('fts-backlog', ['Backlog first'])
    await seed(t.deps.database, [], { tenant: 'fts-backlog', useCases: 300, auditLogs: 700, progress: () => undefined })
    // The read key's token is issued now (an audited write, which would have the indexer run soon).
    expect(await names('fts-backlog', 'backlog first')).toEqual(['Backlog first'])
    await indexed('fts-backlog')
    // Past the indexing that the last commit asked for: from here only the periodic sweep indexes.
    await new Promise((r) => setTimeout(r, 300))
    // As if none of it were indexed: no commit of this instance announces it, so the periodic sweep must find it.
    const index = sql.table('fts-backlog:audit_name_search')
    await t.deps.database.groupedTransaction(async (tx) => {
      await tx.updateTable('tenants').set({ audit_names_seq: 0 }).where('id', '=', 'fts-backlog').execute()
      await sql`insert into ${index} (${index}) values ('delete-all')`.execute(tx)
    })
    // Over 500 records not indexed: the search scans them, and finds exactly what holds q.
    expect(await names('fts-backlog', 'backlog first')).toEqual(['Backlog first'])
    await indexed('fts-backlog')
    expect(await names('fts-backlog', 'backlog first')).toEqual(['Backlog first'])
  }, 30_000)

  it("indexes each tenant on its own: one whose index fails holds up no other tenant's", async () => {
    await addVendors('fts-broken', ['Broken one'])
    await addVendors('fts-fine', ['Fine one'])
    await indexed('fts-broken')
    await indexed('fts-fine')
    await sql`drop table ${sql.table('fts-broken:audit_name_search')}`.execute(t.deps.database.db)
    await addVendors('fts-broken', ['Broken two'])
    await addVendors('fts-fine', ['Fine two'])
    await indexed('fts-fine')
    expect(await names('fts-fine', 'fine two')).toEqual(['Fine two'])
    const broken = await t.deps.database.db
      .selectFrom('tenants')
      .select(['audit_seq', 'audit_names_seq'])
      .where('id', '=', 'fts-broken')
      .executeTakeFirstOrThrow()
    expect(broken.audit_names_seq).toBeLessThan(broken.audit_seq)
  })

  it('moves an existing database to one index per tenant, every record still found', async () => {
    await addVendors('fts-old-a', ['Legacy ledger', 'Ledger two'])
    await addVendors('fts-old-b', ['Ledger of b'])
    const { db } = t.deps.database
    // Back to the shared index of earlier versions, then migrate as an upgraded installation does.
    await perTenantSearch.down(db)
    expect(
      (await sql`select count(*) as n from sqlite_master where name like '%:audit_name_search'`.execute(db)).rows,
    ).toEqual([{ n: 0 }])
    await db
      .deleteFrom('kysely_migration' as never)
      .where('name' as never, '=', '2026-11-23T13b-audit-name-search-per-tenant' as never)
      .execute()
    expect(await t.migrate()).toEqual(['2026-11-23T13b-audit-name-search-per-tenant'])
    expect((await sql`select name from sqlite_master where name = 'audit_logs_name_search'`.execute(db)).rows).toEqual(
      [],
    )
    expect(await names('fts-old-a', 'ledger')).toEqual(['Legacy ledger', 'Ledger two'])
    expect(await names('fts-old-b', 'ledger')).toEqual(['Ledger of b'])
    await addVendors('fts-old-a', ['Ledger three'])
    expect(await names('fts-old-a', 'ledger')).toEqual(['Legacy ledger', 'Ledger two', 'Ledger three'])
  })

  it('leaves no index behind when creating a tenant fails, and the tenant can be created again', async () => {
    const failing = createTenantsService(t.deps.database, [
      async () => {
        throw new Error('provisioning failed')
      },
    ])
    await expect(failing.create('fts-retry')).rejects.toThrow('provisioning failed')
    expect(
      (await sql`select name from sqlite_master where name like 'fts-retry:%'`.execute(t.deps.database.db)).rows,
    ).toEqual([])
    await createTenantsService(t.deps.database).create('fts-retry')
    await addVendors('fts-retry', ['Second attempt'])
    expect(await names('fts-retry', 'attempt')).toEqual(['Second attempt'])
  })
})
