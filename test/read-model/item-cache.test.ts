import { type CompiledQuery, sql } from 'kysely'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { itemText } from '../../src/shared/item-json.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

/**
 * Governed records' JSON is kept across writes (ItemCache) and forgotten from what the audit log says changed.
 * Every read here goes to a second instance too, whose kept items only the shared audit log can correct.
 */
describeEachDialect('records kept rendered across writes', (dialect) => {
  let a: TestApp
  let b: TestApp
  /** Keeps nothing (SERVICE_RECORD_CACHE_MB=0): every read rendered by the database. */
  let plain: TestApp
  beforeAll(async () => {
    a = await startTestApp(dialect)
    b = await startTestApp(dialect, { DATABASE_URL: a.config.databaseUrl })
    plain = await startTestApp(dialect, { DATABASE_URL: a.config.databaseUrl, SERVICE_RECORD_CACHE_MB: '0' })
  })
  afterAll(async () => {
    await plain?.close()
    await b?.close()
    await a?.close()
  })

  const write = (opts: { method: string; url: string; payload?: object }) => a.as('acme', 'write')(opts as never)
  // Custom field definitions take an admin key.
  const admin = (opts: { method: string; url: string; payload?: object }) => a.as('acme', 'admin')(opts as never)
  const post = async (url: string, payload: object) => {
    const res = await (url === '/custom_fields' ? admin : write)({ method: 'POST', url, payload })
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }
  /** The list page and each record's GET, from every instance: all must agree. */
  const readEverywhere = async (collection: string, ids: string[]) => {
    const seen = []
    for (const t of [a, b, plain]) {
      const page = (await t.as('acme', 'read')({ method: 'GET', url: `${collection}?page_limit=100` })).json()
        .items as { id: string }[]
      const gets = await Promise.all(
        ids.map(async (id) => (await t.as('acme', 'read')({ method: 'GET', url: `${collection}/${id}` })).json()),
      )
      seen.push({ page: page.filter((r) => ids.includes(r.id)), gets })
    }
    expect(seen[1]).toEqual(seen[0])
    expect(seen[2]).toEqual(seen[0])
    expect(seen[0].page).toEqual(seen[0].gets)
    return seen[0].gets
  }

  it('shows every kind of change on both instances: own fields, owner renamed, custom field renamed, values, deletes', async () => {
    const ada = await post('/users', { email: 'kept@example.com', name: 'Ada' })
    const field = await post('/custom_fields', { name: 'Tier', entity_types: ['use_case', 'model', 'vendor'] })
    for (const collection of ['/use_cases', '/models', '/vendors']) {
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        ids.push(
          (
            await post(collection, {
              name: `Kept ${collection} ${i}`,
              owner: { owner_id: ada.id },
              custom_fields: [{ custom_field_id: field.id, value: `t${i}` }],
            })
          ).id,
        )
      }
      await readEverywhere(collection, ids)

      // A record's own change: that record is forgotten, the others stay as they were.
      await write({ method: 'PATCH', url: `${collection}/${ids[1]}`, payload: { name: `Renamed ${collection}` } })
      expect((await readEverywhere(collection, ids)).map((r) => r.name)).toEqual([
        `Kept ${collection} 0`,
        `Renamed ${collection}`,
        `Kept ${collection} 2`,
      ])

      // What other records hold: the owner's name and the custom field's name show in every record.
      await write({ method: 'PATCH', url: `/users/${ada.id}`, payload: { name: `Ada of ${collection}` } })
      expect((await readEverywhere(collection, ids)).map((r) => r.owner.name)).toEqual(
        ids.map(() => `Ada of ${collection}`),
      )
      await admin({ method: 'PATCH', url: `/custom_fields/${field.id}`, payload: { name: `Tier of ${collection}` } })
      expect((await readEverywhere(collection, ids)).map((r) => r.custom_fields[0].name)).toEqual(
        ids.map(() => `Tier of ${collection}`),
      )

      await write({
        method: 'PATCH',
        url: `${collection}/${ids[2]}`,
        payload: { custom_fields: [{ custom_field_id: field.id, value: 'changed' }] },
      })
      expect((await readEverywhere(collection, ids)).map((r) => r.custom_fields[0].value)).toEqual([
        't0',
        't1',
        'changed',
      ])

      expect((await write({ method: 'DELETE', url: `${collection}/${ids[0]}` })).statusCode).toBe(204)
      for (const t of [a, b]) {
        expect((await t.as('acme', 'read')({ method: 'GET', url: `${collection}/${ids[0]}` })).statusCode).toBe(404)
        const page = (await t.as('acme', 'read')({ method: 'GET', url: `${collection}?page_limit=100` })).json()
          .items as { id: string }[]
        expect(page.map((r) => r.id)).not.toContain(ids[0])
      }
    }
  })

  it('shows a workflow move and a questionnaire attachment (changes audited under other names)', async () => {
    const uc = await post('/use_cases', { name: 'Kept through the workflow' })
    const [before] = await readEverywhere('/use_cases', [uc.id])
    expect((await write({ method: 'POST', url: `/use_cases/${uc.id}/workflow/advance` })).statusCode).toBe(200)
    const [after] = await readEverywhere('/use_cases', [uc.id])
    expect([after.workflow_stage_id, after.workflow_stage_step]).not.toEqual([
      before.workflow_stage_id,
      before.workflow_stage_step,
    ])

    const sections = [
      {
        id: 's1',
        title: 'Purpose',
        questions: [{ id: 'purpose', question: 'What does it decide?', evidence_type: 'text' }],
      },
    ]
    await post('/questionnaires', { key: 'KEPT', name: 'Kept questionnaire', target: 'use_case', sections })
    await write({ method: 'PATCH', url: `/use_cases/${uc.id}`, payload: { questionnaire_ids: ['KEPT+1'] } })
    expect((await readEverywhere('/use_cases', [uc.id]))[0].questionnaire_ids).toEqual(['KEPT+1'])
  })

  it('keeps list pages across updates that no list reads, and re-reads them after any other change', async () => {
    const ada = await post('/users', { email: 'pages@example.com', name: 'Page owner' })
    const field = await post('/custom_fields', { name: 'Page tier', entity_types: ['use_case'] })
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      ids.push(
        (
          await post('/use_cases', {
            name: `Paged ${i}`,
            risk_category_level: 'high',
            custom_fields: [{ custom_field_id: field.id, value: 'gold' }],
          })
        ).id,
      )
    }
    const lists = [
      '/use_cases?page_limit=2&risk_category_level=high',
      '/use_cases?sort=-name&q=paged',
      '/use_cases?sort=-updated_at&page_limit=3',
      `/use_cases?custom_field_id=${field.id}&custom_field_value=gold`,
      `/use_cases?owner_id=${ada.id}`,
    ]
    /** Every list from every instance, against the instance that keeps nothing; the pages' ids and descriptions. */
    const readLists = async () => {
      const seen: Record<string, [string, string | null][]> = {}
      for (const url of lists) {
        const pages = await Promise.all(
          [a, b, plain].map(async (t) => (await t.as('acme', 'read')({ method: 'GET', url })).json()),
        )
        expect(pages[0], url).toEqual(pages[2])
        expect(pages[1], url).toEqual(pages[2])
        seen[url] = pages[2].items.map((r: { id: string; description: string | null }) => [r.id, r.description])
      }
      return seen
    }
    const patch = async (id: string, payload: object) =>
      expect((await write({ method: 'PATCH', url: `/use_cases/${id}`, payload })).statusCode).toBe(200)
    const first = await readLists()
    expect(first[lists[0]].map(([id]) => id)).toEqual(ids.slice(0, 2))

    // Unlisted fields: the same records, in the same order, with the new content (updated_at sorts move it up).
    await patch(ids[1], { description: 'kept page' })
    const kept = await readLists()
    expect(kept[lists[0]]).toEqual([
      [ids[0], null],
      [ids[1], 'kept page'],
    ])
    expect(kept[lists[2]][0]).toEqual([ids[1], 'kept page'])

    // Fields lists read: the pages change.
    await patch(ids[0], { risk_category_level: 'low' })
    expect((await readLists())[lists[0]].map(([id]) => id)).toEqual([ids[1], ids[2]])
    await patch(ids[3], { name: 'Zz paged last' })
    expect((await readLists())[lists[1]][0][0]).toBe(ids[3])
    await patch(ids[2], { custom_fields: [{ custom_field_id: field.id, value: 'silver' }] })
    expect((await readLists())[lists[3]].map(([id]) => id)).not.toContain(ids[2])
    await patch(ids[2], { owner: { owner_id: ada.id } })
    expect((await readLists())[lists[4]].map(([id]) => id)).toEqual([ids[2]])
    await post('/use_cases', { name: 'Paged newest', risk_category_level: 'high' })
    expect((await readLists())[lists[1]].map(([id]) => id)).toHaveLength(5)
    expect((await write({ method: 'DELETE', url: `/use_cases/${ids[1]}` })).statusCode).toBe(204)
    expect((await readLists())[lists[0]].map(([id]) => id)).toEqual([ids[2], ids[3]])
  })

  it('shows a change made behind one instance once the audit log records it, and many changes at once', async () => {
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await post('/vendors', { name: `Busy vendor ${i}` })).id)
    await readEverywhere('/vendors', ids)
    // More changes between two reads than the cache reads one by one: it forgets the tenant's records.
    for (let i = 0; i < 210; i++)
      await write({ method: 'PATCH', url: `/vendors/${ids[i % 5]}`, payload: { description: `pass ${i}` } })
    expect((await readEverywhere('/vendors', ids)).map((r) => r.description)).toEqual([
      'pass 205',
      'pass 206',
      'pass 207',
      'pass 208',
      'pass 209',
    ])
    // Another tenant's writes forget nothing of this one's.
    await a.as('globex', 'write')({ method: 'POST', url: '/vendors', payload: { name: 'Elsewhere' } })
    expect((await readEverywhere('/vendors', ids)).map((r) => r.name)).toEqual(ids.map((_id, i) => `Busy vendor ${i}`))
    // Sanity of the premise: the records' audit trail is what the second instance learns from.
    const { rows } = await sql<{
      n: number
    }>`select count(*) as n from audit_logs where tenant_id = 'acme' and resource_type = 'vendor'`.execute(
      a.deps.database.db,
    )
    expect(Number(rows[0].n)).toBeGreaterThan(210)
  })

  it('sends a kept page again only while every record on it is unchanged', async () => {
    const owner = await post('/users', { email: 'body@example.com', name: 'Body owner' })
    const ids: string[] = []
    for (let i = 0; i < 3; i++)
      ids.push((await post('/use_cases', { name: `Body ${i}`, owner: { owner_id: owner.id } })).id)
    const url = `/use_cases?owner_id=${owner.id}&page_limit=2`
    const page = async () => {
      const bodies = await Promise.all(
        [a, b, plain].map(async (t) => (await t.as('acme', 'read')({ method: 'GET', url })).body),
      )
      expect(bodies[0]).toBe(bodies[2])
      expect(bodies[1]).toBe(bodies[2])
      return JSON.parse(bodies[0]).items as { id: string; description: string | null; owner: { name: string } }[]
    }
    const first = await page()
    expect(first.map((r) => r.id)).toEqual(ids.slice(0, 2))
    // A record that is not on the page: the page as it was.
    await write({ method: 'PATCH', url: `/use_cases/${ids[2]}`, payload: { description: 'elsewhere' } })
    expect(await page()).toEqual(first)
    // One of its records, then what every record shows (the owner's name): the page with the change.
    await write({ method: 'PATCH', url: `/use_cases/${ids[1]}`, payload: { description: 'on the page' } })
    expect((await page()).map((r) => r.description)).toEqual([null, 'on the page'])
    await write({ method: 'PATCH', url: `/users/${owner.id}`, payload: { name: 'Renamed body owner' } })
    expect((await page()).map((r) => r.owner.name)).toEqual(['Renamed body owner', 'Renamed body owner'])
  })

  it("moves on past its own instance's writes without reading them back, and reads the others' from the log", async () => {
    const id = (await post('/vendors', { name: 'Local vendor' })).id
    await readEverywhere('/vendors', [id])
    const logReads = (spy: { mock: { calls: unknown[][] } }) =>
      spy.mock.calls.filter(([query]) => (query as CompiledQuery).sql.includes('from "audit_logs"')).length
    const queries = vi.spyOn(a.deps.database.db, 'executeQuery')
    try {
      await write({ method: 'PATCH', url: `/vendors/${id}`, payload: { description: 'written here' } })
      const read = await a.as('acme', 'read')({ method: 'GET', url: `/vendors/${id}` })
      expect(read.json().description).toBe('written here')
      expect(logReads(queries)).toBe(0)
      // A write of the other instance: this one learns of it from the log.
      await b.as('acme', 'write')({ method: 'PATCH', url: `/vendors/${id}`, payload: { description: 'written there' } })
      expect((await a.as('acme', 'read')({ method: 'GET', url: `/vendors/${id}` })).json().description).toBe(
        'written there',
      )
      expect(logReads(queries)).toBe(1)
    } finally {
      queries.mockRestore()
    }
    expect((await readEverywhere('/vendors', [id]))[0].description).toBe('written there')
  })

  it("files a rendering made before other records' writes, and never one made before its own record's write", async () => {
    const [kept, changed, other] = await Promise.all(
      ['Slow read', 'Changed meanwhile', 'Busy neighbour'].map(async (name) => (await post('/vendors', { name })).id),
    )
    const cache = b.deps.readModel.records!
    const head = async () =>
      (
        await b.deps.database.db
          .selectFrom('tenants')
          .select('audit_seq')
          .where('id', '=', 'acme')
          .executeTakeFirstOrThrow()
      ).audit_seq
    // Reads that took their view, then rendered while writes of the tenant committed (here: on the other instance).
    const before = await cache.view('acme', await head())
    await write({ method: 'PATCH', url: `/vendors/${other}`, payload: { description: 'a neighbour changed' } })
    await write({ method: 'PATCH', url: `/vendors/${changed}`, payload: { description: 'changed after the view' } })
    const after = await cache.view('acme', await head())
    expect(after.seq).toBeGreaterThan(before.seq)
    cache.put(before, 'vendor', kept, 'v1', itemText('{"rendered":"before the neighbour wrote"}'))
    cache.put(before, 'vendor', changed, 'v1', itemText('{"rendered":"before its own write"}'))
    expect(cache.get(after, 'vendor', kept)?.json).toBe('{"rendered":"before the neighbour wrote"}')
    expect(cache.get(after, 'vendor', changed)).toBeUndefined()
    // A change of anything else a rendering shows (here a user) starts a new epoch: nothing older is filed.
    await post('/users', { email: 'epoch@example.com', name: 'New epoch' })
    const later = await cache.view('acme', await head())
    cache.put(after, 'vendor', other, 'v1', itemText('{"rendered":"before the user was made"}'))
    expect(cache.get(later, 'vendor', other)).toBeUndefined()
    expect((await readEverywhere('/vendors', [kept, changed, other])).map((v) => v.description)).toEqual([
      null,
      'changed after the view',
      'a neighbour changed',
    ])
  })

  it("keeps the rendering its own update's statement made, and renders the record again after another instance's", async () => {
    const owner = await post('/users', { email: 'written@example.com', name: 'Written owner' })
    const field = await post('/custom_fields', { name: 'Written field', type: 'string', entity_types: ['use_case'] })
    const id = (await post('/use_cases', { name: 'Written through', owner: { owner_id: owner.id } })).id
    await readEverywhere('/use_cases', [id])
    const renders = (spy: { mock: { calls: unknown[][] } }) =>
      spy.mock.calls.filter(([query]) => /^select .*from "use_cases"/s.test((query as CompiledQuery).sql)).length
    const queries = vi.spyOn(a.deps.database.db, 'executeQuery')
    try {
      // Owner and custom field values are written before the record's own update: its rendering shows them.
      const res = await write({
        method: 'PATCH',
        url: `/use_cases/${id}`,
        payload: { description: 'written here', custom_fields: [{ custom_field_id: field.id, value: 'kept' }] },
      })
      expect(res.statusCode, res.body).toBe(200)
      queries.mockClear()
      const read = (await a.as('acme', 'read')({ method: 'GET', url: `/use_cases/${id}` })).json()
      expect(read.description).toBe('written here')
      expect(read.custom_fields).toEqual([{ custom_field_id: field.id, name: 'Written field', value: 'kept' }])
      expect(renders(queries)).toBe(0)
      await b.as(
        'acme',
        'write',
      )({ method: 'PATCH', url: `/use_cases/${id}`, payload: { description: 'written there' } })
      expect((await a.as('acme', 'read')({ method: 'GET', url: `/use_cases/${id}` })).json().description).toBe(
        'written there',
      )
      expect(renders(queries)).toBe(1)
    } finally {
      queries.mockRestore()
    }
    expect((await readEverywhere('/use_cases', [id]))[0].description).toBe('written there')
  })

  it('reads a record once for the requests that miss it at once, unless it changed in between', async () => {
    const [id, neighbour] = await Promise.all(
      ['Wanted at once', 'Its neighbour'].map(async (name) => (await post('/vendors', { name })).id),
    )
    const cache = b.deps.readModel.records!
    const view = async () =>
      cache.view(
        'acme',
        (
          await b.deps.database.db
            .selectFrom('tenants')
            .select('audit_seq')
            .where('id', '=', 'acme')
            .executeTakeFirstOrThrow()
        ).audit_seq,
      )
    let reads = 0
    // Each read answers once let go: the renderings stay under way for as long as the test needs.
    let letGo = () => {}
    const slowRead = (json: string) => async (ids: string[]) => {
      reads++
      await new Promise<void>((resolve) => (letGo = resolve))
      return ids.map((some) => ({ id: some, updatedAt: 'v1', text: itemText(json) }))
    }
    const answered = <T>(rendering: Promise<T>) => {
      letGo()
      return rendering
    }
    const render = (at: Awaited<ReturnType<typeof view>>, json: string) =>
      cache.render(at, 'vendor', [id], slowRead(json))
    const patch = (target: string, description: string) =>
      write({ method: 'PATCH', url: `/vendors/${target}`, payload: { description } })

    await patch(id, 'first')
    const first = await view()
    const shared = await answered(Promise.all([render(first, '{"read":1}'), render(first, '{"read":2}')]))
    expect(reads).toBe(1)
    expect(shared.map((texts) => texts.get(id)?.json)).toEqual(['{"read":1}', '{"read":1}'])

    // Under way for an older view: shared across another record's write, read again after the record's own.
    await patch(id, 'second')
    const older = await view()
    const underWay = render(older, '{"read":"older"}')
    const letOlderGo = letGo
    await patch(neighbour, 'meanwhile')
    const sharing = render(await view(), '{"read":"shared"}')
    await patch(id, 'third')
    expect((await answered(render(await view(), '{"read":"newer"}'))).get(id)?.json).toBe('{"read":"newer"}')
    letOlderGo()
    expect((await sharing).get(id)?.json).toBe('{"read":"older"}')
    await underWay
    expect(reads).toBe(3)
    // The stand-in renderings filed here go with the record's next change.
    await patch(id, 'fourth')
    expect((await readEverywhere('/vendors', [id]))[0].description).toBe('fourth')
  })

  it('reads what changed once for all the requests that find the head moved by a write', async () => {
    const id = (await post('/vendors', { name: 'Watched vendor' })).id
    await readEverywhere('/vendors', [id])
    await write({ method: 'PATCH', url: `/vendors/${id}`, payload: { description: 'moved once' } })
    // As requests come: each with the head the read cache read for it.
    const { audit_seq: head } = await b.deps.database.db
      .selectFrom('tenants')
      .select('audit_seq')
      .where('id', '=', 'acme')
      .executeTakeFirstOrThrow()
    const queries = vi.spyOn(b.deps.database.db, 'executeQuery')
    try {
      const views = await Promise.all(Array.from({ length: 5 }, () => b.deps.readModel.records!.view('acme', head)))
      expect(queries.mock.calls.filter(([query]) => (query as CompiledQuery).sql.includes('audit_logs'))).toHaveLength(
        1,
      )
      expect(new Set(views.map((view) => view.seq)).size).toBe(1)
    } finally {
      queries.mockRestore()
    }
    expect((await readEverywhere('/vendors', [id]))[0].description).toBe('moved once')
  })
})
