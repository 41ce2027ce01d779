import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

describeEachDialect('use cases', (dialect) => {
  let t: TestApp
  let write: ReturnType<TestApp['as']>
  beforeAll(async () => {
    t = await startTestApp(dialect)
    write = t.as('acme', 'write')
  })
  afterAll(async () => t.close())

  const create = (payload: object) => write({ method: 'POST', url: '/use_cases', payload })
  const user = async (email: string) =>
    (await write({ method: 'POST', url: '/users', payload: { email, name: email.split('@')[0] } })).json().id as string

  it('creates with every field and reads it back', async () => {
    const ownerId = await user('risk@example.com')
    const body = {
      name: 'Fraud detection',
      description: 'Flags card fraud',
      ai_type: 'machine_learning',
      system_type: 'decision_support',
      risk_category_level: 'high',
      regions: ['EU', 'US'],
      industries: ['banking'],
      source: 'jira',
    }
    const res = await create({ ...body, owner: { owner_id: ownerId, owner_type: 'user' } })
    expect(res.statusCode).toBe(201)
    const uc = res.json()
    expect(uc).toMatchObject({
      ...body,
      owner: { owner_id: ownerId, owner_type: 'user', name: 'risk' },
      custom_fields: [],
      questionnaire_ids: [],
    })
    expect(uc.created_at).toBe(uc.updated_at)
    expect(new Date(uc.created_at).toISOString()).toBe(uc.created_at)
    expect((await write({ method: 'GET', url: `/use_cases/${uc.id}` })).json()).toEqual(uc)
  })

  it("answers 404 for another tenant's use case, model or vendor, read before by its own tenant or not", async () => {
    const other = t.as('globex', 'write')
    for (const [path, name] of [
      ['/use_cases', 'Private scoring'],
      ['/models', 'Private model'],
      ['/vendors', 'Private vendor'],
    ]) {
      const { id } = (await write({ method: 'POST', url: path, payload: { name } })).json()
      expect((await other({ method: 'GET', url: `${path}/${id}` })).statusCode).toBe(404)
      expect((await write({ method: 'GET', url: `${path}/${id}` })).json()).toMatchObject({ id, name })
      const res = await other({ method: 'GET', url: `${path}/${id}` })
      expect(res.statusCode).toBe(404)
      expect(res.body).not.toContain(name)
      expect((await other({ method: 'GET', url: `${path}?page_limit=50` })).json().items).toEqual([])
    }
  })

  it('treats null as absent on create and as clear on update', async () => {
    const uc = (await create({ name: 'Nulls', owner: null, regions: null })).json()
    expect(uc.owner).toBeNull()
    expect(uc.regions).toEqual([])
    const ownerId = await user('a@b.c')
    const set = (
      await write({
        method: 'PATCH',
        url: `/use_cases/${uc.id}`,
        payload: { owner: { owner_id: ownerId }, regions: ['EU'] },
      })
    ).json()
    expect(set).toMatchObject({ owner: { owner_id: ownerId, owner_type: 'user', name: 'a' }, regions: ['EU'] })
    const cleared = (
      await write({ method: 'PATCH', url: `/use_cases/${uc.id}`, payload: { owner: null, regions: null } })
    ).json()
    expect(cleared).toMatchObject({ owner: null, regions: [], name: 'Nulls' })
    expect(cleared.updated_at >= set.updated_at).toBe(true)
  })

  it('keeps names unique per tenant, case-insensitively (422 already_exists with the existing id), but not across tenants', async () => {
    const first = await create({ name: 'Chatbot' })
    expect(first.statusCode).toBe(201)
    const dup = await create({ name: '  CHATBOT ' })
    expect(dup.statusCode).toBe(422)
    expect(dup.json()).toMatchObject({
      code: 'already_exists',
      status: 422,
      existing_id: first.json().id,
      errors: [{ field: 'name' }],
    })
    const other = (await create({ name: 'Other bot' })).json()
    const rename = await write({ method: 'PATCH', url: `/use_cases/${other.id}`, payload: { name: 'chatbot' } })
    expect(rename.statusCode).toBe(422)
    expect(rename.json().existing_id).toBe(first.json().id)
    expect(
      (await t.as('globex', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'Chatbot' } })).statusCode,
    ).toBe(201)
  })

  it('validates bodies with 422 naming each field', async () => {
    const res = await create({ name: '', risk_category_level: 'extreme', regions: 'EU', workflow_stage_id: 'ws_x' })
    expect(res.statusCode).toBe(422)
    const fields = res
      .json()
      .errors.map((e: { field: string }) => e.field)
      .sort()
    expect(fields).toEqual(['name', 'regions', 'risk_category_level', 'workflow_stage_id'])
    expect((await create({ description: 'no name' })).json().errors).toEqual([
      { field: 'name', message: 'is required' },
    ])
    expect((await create({ name: 'x'.repeat(513) })).statusCode).toBe(422)
    expect((await create({ name: 42 })).statusCode).toBe(422)
  })

  it('makes workflow fields read-only on PATCH', async () => {
    const uc = (await create({ name: 'Readonly workflow' })).json()
    const res = await write({ method: 'PATCH', url: `/use_cases/${uc.id}`, payload: { workflow_stage_step: 'clear' } })
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ field: 'workflow_stage_step', message: 'unknown field' }])
  })

  it('writes no audit record for a PATCH that changes nothing', async () => {
    const owner = { owner_id: await user('x@example.com') }
    const uc = (await create({ name: 'Unchanged', owner })).json()
    const res = await write({ method: 'PATCH', url: `/use_cases/${uc.id}`, payload: { owner } })
    expect(res.json()).toEqual(uc)
    const audit = (await write({ method: 'GET', url: `/audit_logs?resource_id=${uc.id}` })).json().items
    expect(audit.map((a: { action: string }) => a.action)).toEqual(['use_case.created'])
  })

  it('records updates with before and after', async () => {
    const uc = (await create({ name: 'Audited', risk_category_level: 'low' })).json()
    await write({
      method: 'PATCH',
      url: `/use_cases/${uc.id}`,
      payload: { risk_category_level: 'high', name: 'Audited v2' },
    })
    const [entry] = (
      await write({ method: 'GET', url: `/audit_logs?resource_id=${uc.id}&action=use_case.updated` })
    ).json().items
    expect(entry.changes).toEqual({ risk_category_level: ['low', 'high'], name: ['Audited', 'Audited v2'] })
    expect(entry).toMatchObject({
      resource_type: 'use_case',
      resource_name: 'Audited v2',
      use_case_id: uc.id,
      source: 'api',
    })
    expect(entry.actor.type).toBe('api_key')
    expect(entry.request_id).toBeTruthy()
  })

  it('records concurrent updates of one use case each against the one before it (never two from the same state)', async () => {
    const uc = (await create({ name: 'Contended' })).json()
    // Spread over several turns, so that they also run in concurrent transactions rather than in one group.
    const updates = Array.from({ length: 24 }, (_, i) =>
      new Promise((r) => setTimeout(r, i % 4)).then(() =>
        write({ method: 'PATCH', url: `/use_cases/${uc.id}`, payload: { description: `version ${i}` } }),
      ),
    )
    expect((await Promise.all(updates)).map((res) => res.statusCode)).toEqual(updates.map(() => 200))
    // In chain order: each record's created_at is read while the tenant's chain is held.
    const entries = (
      await write({
        method: 'GET',
        url: `/audit_logs?resource_id=${uc.id}&action=use_case.updated&sort=created_at&page_limit=100`,
      })
    ).json().items as { changes: { description: [string | null, string] } }[]
    const chain = entries.map((e) => e.changes.description)
    expect(chain).toHaveLength(24)
    chain.forEach(([before], i) => {
      expect(before).toBe(i === 0 ? null : chain[i - 1][1])
    })
  })

  it('filters by q, risk level and creation time, and sorts', async () => {
    const read = t.as('filters', 'write')
    const names = ['Alpha scoring', 'beta SCORING', 'Gamma chat', '100%_literal']
    const made = []
    for (const [i, name] of names.entries()) {
      // Created in different milliseconds (created_at's resolution), as the creation-time filters below assume:
      // two creates in a row can otherwise share one.
      if (i > 0) await new Promise((r) => setTimeout(r, 2))
      made.push(
        (
          await read({
            method: 'POST',
            url: '/use_cases',
            payload: { name, risk_category_level: i % 2 ? 'high' : 'low' },
          })
        ).json(),
      )
    }
    const list = async (query: string) =>
      (await read({ method: 'GET', url: `/use_cases?${query}` })).json().items.map((u: { name: string }) => u.name)
    expect(await list('q=scoring')).toEqual(['Alpha scoring', 'beta SCORING'])
    expect(await list('q=%25_')).toEqual(['100%_literal'])
    expect(await list('q=_')).toEqual(['100%_literal'])
    expect(await list('risk_category_level=high')).toEqual(['beta SCORING', '100%_literal'])
    expect(await list('sort=name')).toEqual(['100%_literal', 'Alpha scoring', 'beta SCORING', 'Gamma chat'])
    expect(await list('sort=-name')).toEqual(['Gamma chat', 'beta SCORING', 'Alpha scoring', '100%_literal'])
    expect(await list('sort=-created_at')).toEqual([...names].reverse())
    expect(await list(`created_after=${encodeURIComponent(made[1].created_at)}`)).toEqual(names.slice(2))
    expect(await list(`created_before=${encodeURIComponent(made[1].created_at)}`)).toEqual(names.slice(0, 1))
    expect((await read({ method: 'GET', url: '/use_cases?sort=owner' })).statusCode).toBe(400)
    expect((await read({ method: 'GET', url: '/use_cases?created_after=yesterday' })).statusCode).toBe(400)
  })

  it("continues in the cursor's sort when sort is left out, and rejects a cursor made for another sort", async () => {
    const read = t.as('filters', 'read')
    const page = (await read({ method: 'GET', url: '/use_cases?page_limit=1&sort=name' })).json()
    const continued = await read({
      method: 'GET',
      url: `/use_cases?page_limit=1&page_after=${page.pagination.next_cursor}`,
    })
    expect(continued.statusCode).toBe(200)
    expect(continued.json().items).toEqual(
      (
        await read({
          method: 'GET',
          url: `/use_cases?page_limit=1&sort=name&page_after=${page.pagination.next_cursor}`,
        })
      ).json().items,
    )
    const res = await read({
      method: 'GET',
      url: `/use_cases?page_limit=1&sort=-name&page_after=${page.pagination.next_cursor}`,
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().errors[0].field).toBe('page_after')
  })
})
