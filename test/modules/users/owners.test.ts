import { sql } from 'kysely'
import { expect, it } from 'vitest'
import { describeEachDialect } from '../../helpers/harness.js'
import { publishedControl } from '../../helpers/policy.js'
import { suiteApp } from '../../helpers/suite-app.js'

describeEachDialect('owners and assignees', (dialect) => {
  const suite = suiteApp(dialect)
  const { write, post } = suite

  it('sets owners on use cases, models and vendors, returns their names, filters by owner_id, audits the change', async () => {
    const ada = await post('/users', { email: 'ada@example.com', name: 'Ada' })
    const team = await post('/teams', { name: 'Credit risk' })
    for (const collection of ['/use_cases', '/models', '/vendors']) {
      const record = await post(collection, {
        name: `Owned ${collection}`,
        owner: { owner_id: ada.id, owner_type: 'user' },
      })
      expect(record.owner).toEqual({ owner_id: ada.id, owner_type: 'user', name: 'Ada' })
      await post(collection, { name: `Unowned ${collection}` })
      const moved = await write({
        method: 'PATCH',
        url: `${collection}/${record.id}`,
        payload: { owner: { owner_id: team.id } },
      })
      expect(moved.json().owner).toEqual({ owner_id: team.id, owner_type: 'team', name: 'Credit risk' })
      const owned = (await write({ method: 'GET', url: `${collection}?owner_id=${team.id}` })).json().items
      expect(owned.map((r: { id: string }) => r.id)).toEqual([record.id])
      const audit = (await write({ method: 'GET', url: `/audit_logs?resource_id=${record.id}` })).json().items
      expect(audit[1].changes).toEqual({
        owner: [
          { owner_id: ada.id, owner_type: 'user', name: 'Ada' },
          { owner_id: team.id, owner_type: 'team', name: 'Credit risk' },
        ],
      })
    }
    // A renamed owner shows its new name everywhere.
    await write({ method: 'PATCH', url: `/teams/${team.id}`, payload: { name: 'Credit risk office' } })
    const [uc] = (await write({ method: 'GET', url: `/use_cases?owner_id=${team.id}` })).json().items
    expect(uc.owner.name).toBe('Credit risk office')
  })

  it('refuses unknown, mistyped and other-tenant owners with 422 naming the member; nothing is written', async () => {
    const theirs = (
      await suite.t.as('globex', 'write')({ method: 'POST', url: '/users', payload: { email: 'them@example.com' } })
    ).json()
    const mine = await post('/users', { email: 'mine@example.com' })
    const refused = async (owner: object, member: string) => {
      const res = await write({ method: 'POST', url: '/models', payload: { name: 'Refused owner', owner } })
      expect(res.statusCode, res.body).toBe(422)
      expect(res.json().errors[0].field).toBe(member)
    }
    await refused({ owner_id: theirs.id }, 'owner/owner_id')
    await refused({ owner_id: 'usr_00000000000000000000000000' }, 'owner/owner_id')
    await refused({ owner_id: mine.id, owner_type: 'team' }, 'owner/owner_type')
    await refused({ owner_id: 'someone@example.com' }, 'owner/owner_id')
    expect((await write({ method: 'GET', url: '/models?q=refused' })).json().items).toEqual([])
  })

  it('refuses to delete a user or team that owns or is assigned something (409 naming it); deactivating keeps history', async () => {
    const owner = await post('/users', { email: 'keeper@example.com', name: 'Keeper' })
    const team = await post('/teams', { name: 'Keepers' })
    const vendor = await post('/vendors', { name: 'Kept vendor', owner: { owner_id: owner.id } })
    await post('/models', { name: 'Kept model', owner: { owner_id: team.id } })
    const refused = await write({ method: 'DELETE', url: `/users/${owner.id}` })
    expect(refused.statusCode).toBe(409)
    expect(refused.json().detail).toContain(`vendor "Kept vendor" (${vendor.id})`)
    expect((await write({ method: 'DELETE', url: `/teams/${team.id}` })).json().detail).toContain('model "Kept model"')
    const off = await write({ method: 'PATCH', url: `/users/${owner.id}`, payload: { active: false } })
    expect(off.json().active).toBe(false)
    expect((await write({ method: 'GET', url: `/vendors/${vendor.id}` })).json().owner).toEqual({
      owner_id: owner.id,
      owner_type: 'user',
      name: 'Keeper',
    })
    await write({ method: 'PATCH', url: `/vendors/${vendor.id}`, payload: { owner: null } })
    expect((await write({ method: 'DELETE', url: `/users/${owner.id}` })).statusCode).toBe(204)
  })

  it('assigns use-case controls and groups open controls by assignee in the governance summary', async () => {
    for (const key of ['OWN-A', 'OWN-B', 'OWN-C']) await publishedControl(suite.t, 'summary', key)
    const w = suite.t.as('summary', 'write')
    expect(
      (
        await w({
          method: 'POST',
          url: '/policy_packs',
          payload: { key: 'OWN', name: 'Owners', controls: [{ key: 'OWN-A' }, { key: 'OWN-B' }, { key: 'OWN-C' }] },
        })
      ).statusCode,
    ).toBe(201)
    const uc = (await w({ method: 'POST', url: '/use_cases', payload: { name: 'Assigned' } })).json()
    expect(
      (
        await w({
          method: 'POST',
          url: `/use_cases/${uc.id}/policy_packs`,
          payload: { key: 'OWN', due_date: '2027-01-01' },
        })
      ).statusCode,
    ).toBe(201)
    const controls = (await w({ method: 'GET', url: `/use_cases/${uc.id}/controls` })).json().items
    const bo = (await w({ method: 'POST', url: '/users', payload: { email: 'bo@example.com', name: 'Bo' } })).json()
    const team = (await w({ method: 'POST', url: '/teams', payload: { name: 'Implementers' } })).json()
    const assign = (control: { id: string }, body: object) =>
      w({ method: 'PATCH', url: `/use_cases/${uc.id}/controls/${control.id}`, payload: body })
    const res = await assign(controls[0], { assignee: { owner_id: bo.id } })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().assignee).toEqual({ owner_id: bo.id, owner_type: 'user', name: 'Bo' })
    await assign(controls[1], { assignee: { owner_id: team.id, owner_type: 'team' }, status: 'implemented' })
    expect(
      (await assign(controls[2], { assignee: { owner_id: 'team_00000000000000000000000000' } })).json().errors[0].field,
    ).toBe('assignee/owner_id')
    const audit = (
      await w({ method: 'GET', url: `/audit_logs?resource_id=${controls[0].id}&action=use_case_control.updated` })
    ).json().items
    expect(audit[0].changes).toEqual({ assignee: [null, { owner_id: bo.id, owner_type: 'user', name: 'Bo' }] })
    const mine = (await w({ method: 'GET', url: `/use_cases/${uc.id}/controls?assignee_id=${bo.id}` })).json().items
    expect(mine.map((c: { id: string }) => c.id)).toEqual([controls[0].id])

    const summary = (await w({ method: 'GET', url: '/governance_summary?as_of=2027-06-01' })).json()
    expect(summary.controls.open_by_assignee).toEqual([
      { assignee: { owner_id: bo.id, owner_type: 'user', name: 'Bo' }, open: 1, overdue: 1 },
      { assignee: null, open: 1, overdue: 1 },
    ])
    expect((await w({ method: 'DELETE', url: `/users/${bo.id}` })).json().detail).toContain(
      `is assigned control OWN-A (${controls[0].id})`,
    )
  })

  it('finds a record by custom field value among 10 000 through the value index', async () => {
    const w = suite.t.as('bulk', 'write')
    const fieldId = (
      await suite.t.as(
        'bulk',
        'admin',
      )({ method: 'POST', url: '/custom_fields', payload: { name: 'Azure resource id', entity_types: ['model'] } })
    ).json().id
    const { db } = suite.t.deps.database
    const at = new Date().toISOString()
    const ids: string[] = []
    for (let first = 0; first < 10_000; first += 500) {
      const models = []
      const values = []
      for (let i = first; i < first + 500; i++) {
        const id = `mdl_${String(i).padStart(26, '0')}`
        ids.push(id)
        models.push({
          id,
          tenant_id: 'bulk',
          name: `Bulk ${i}`,
          name_key: `bulk ${i}`,
          summary: null,
          source: null,
          status: 'none',
          provider: null,
          model_type: null,
          version: null,
          owner_id: null,
          owner_type: null,
          created_at: at,
          updated_at: at,
        })
        values.push({
          tenant_id: 'bulk',
          custom_field_id: fieldId,
          entity_type: 'model',
          entity_id: id,
          position: 0,
          value: JSON.stringify(`/subscriptions/s/resource/${i}`),
          value_key: `/subscriptions/s/resource/${i}`,
        })
      }
      await db.insertInto('models').values(models).execute()
      await db.insertInto('custom_field_values').values(values).execute()
    }
    const found = await w({
      method: 'GET',
      url: `/models?custom_field_id=${fieldId}&custom_field_value=${encodeURIComponent('/subscriptions/s/resource/7321')}`,
    })
    expect(found.json().items.map((m: { id: string }) => m.id)).toEqual([ids[7321]])
    expect(found.json().items[0].custom_fields).toEqual([
      { custom_field_id: fieldId, name: 'Azure resource id', value: '/subscriptions/s/resource/7321' },
    ])

    // The list's query shape: the records whose id is among the value index's matches, in keyset order.
    const query = sql`select * from models where tenant_id = ${'bulk'} and id in (select entity_id from custom_field_values where tenant_id = ${'bulk'} and custom_field_id = ${fieldId} and value_key = ${'/subscriptions/s/resource/7321'} and entity_type = ${'model'}) order by id asc limit 51`
    let plan: string
    if (dialect === 'sqlite') {
      plan = (await sql<{ detail: string }>`explain query plan ${query}`.execute(db)).rows
        .map((r) => r.detail)
        .join('\n')
    } else {
      await sql`analyze models`.execute(db)
      await sql`analyze custom_field_values`.execute(db)
      plan = (await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(db)).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n')
    }
    console.log(`find-by-value plan at 10 000 models [${dialect}]:\n${plan}`)
    expect(plan).toContain('custom_field_values_lookup')
    expect(plan).not.toMatch(/SCAN models|Seq Scan on models/)
  }, 60_000)
})
