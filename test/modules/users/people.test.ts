import { expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect } from '../../helpers/harness.js'
import { namedRecordTests } from '../../helpers/named-records.js'
import { auditActions } from '../../helpers/policy.js'
import { suiteApp } from '../../helpers/suite-app.js'

describeEachDialect('users: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/users',
    resourceType: 'user',
    idPrefix: 'usr',
    validBody: (i) => ({ email: `person${i}@example.com`, name: `Person ${i}` }),
    updateBody: { title: 'Risk officer' },
    deletable: true,
  })
})

describeEachDialect('teams: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/teams',
    resourceType: 'team',
    idPrefix: 'team',
    validBody: (i) => ({ name: `Team ${i}`, description: 'contract test' }),
    updateBody: { description: 'changed' },
    deletable: true,
  })
})

describeEachDialect('teams: names', (dialect) => namedRecordTests(dialect, { collection: '/teams' }))

describeEachDialect('people', (dialect) => {
  const suite = suiteApp(dialect)
  const { write, post } = suite

  it('keeps emails unique per tenant case-insensitively, finds by email and q, filters by active', async () => {
    const ada = await post('/users', { email: 'Ada@Example.com', name: 'Ada Lovelace', title: 'Analyst' })
    expect(ada).toMatchObject({ email: 'Ada@Example.com', name: 'Ada Lovelace', title: 'Analyst', active: true })
    expect(ada.id).toMatch(/^usr_[0-9a-z]{26}$/)
    const dup = await write({ method: 'POST', url: '/users', payload: { email: 'ada@example.COM' } })
    expect(dup.statusCode).toBe(422)
    expect(dup.json()).toMatchObject({ code: 'already_exists', existing_id: ada.id, errors: [{ field: 'email' }] })
    expect(
      (await suite.t.as('globex', 'write')({ method: 'POST', url: '/users', payload: { email: 'ada@example.com' } }))
        .statusCode,
    ).toBe(201)
    expect(
      (await write({ method: 'POST', url: '/users', payload: { email: 'not an email' } })).json().errors[0].field,
    ).toBe('email')
    const grace = await post('/users', { email: 'grace@example.com', name: 'Grace Hopper' })
    await write({ method: 'PATCH', url: `/users/${grace.id}`, payload: { active: false } })
    const read = suite.t.as('acme', 'read')
    const emails = async (query: string) =>
      (await read({ method: 'GET', url: `/users?${query}` })).json().items.map((u: { email: string }) => u.email)
    expect(await emails('email=ADA@example.com')).toEqual(['Ada@Example.com'])
    expect(await emails('q=hopper')).toEqual(['grace@example.com'])
    expect(await emails('q=EXAMPLE&sort=-email')).toEqual(['grace@example.com', 'Ada@Example.com'])
    expect(await emails('active=false')).toEqual(['grace@example.com'])
    expect(await emails('active=true')).toEqual(['Ada@Example.com'])
  })

  it('adds members once, lists and removes them, audited; other tenants see 404', async () => {
    const team = await post('/teams', { name: 'Model risk' })
    const u1 = await post('/users', { email: 'm1@example.com' })
    const u2 = await post('/users', { email: 'm2@example.com' })
    const add = (userId: string) =>
      write({ method: 'POST', url: `/teams/${team.id}/members`, payload: { user_id: userId } })
    expect((await add(u1.id)).statusCode).toBe(201)
    expect((await add(u1.id)).statusCode).toBe(200)
    expect((await add(u2.id)).statusCode).toBe(201)
    const members = await write({ method: 'GET', url: `/teams/${team.id}/members` })
    expect(members.json().items.map((u: { id: string }) => u.id)).toEqual([u1.id, u2.id])
    expect((await write({ method: 'DELETE', url: `/teams/${team.id}/members/${u1.id}` })).statusCode).toBe(204)
    expect((await write({ method: 'DELETE', url: `/teams/${team.id}/members/${u1.id}` })).statusCode).toBe(404)
    expect(await auditActions(suite.t, 'acme', `resource_id=${team.id}`)).toEqual([
      'team.created',
      'team.member_added',
      'team.member_added',
      'team.member_removed',
    ])

    const globex = suite.t.as('globex', 'write')
    const stranger = (
      await globex({ method: 'POST', url: '/users', payload: { email: 'stranger@example.com' } })
    ).json()
    expect((await add(stranger.id)).statusCode).toBe(404)
    expect((await globex({ method: 'GET', url: `/teams/${team.id}/members` })).statusCode).toBe(404)
    expect(
      (await globex({ method: 'POST', url: `/teams/${team.id}/members`, payload: { user_id: stranger.id } }))
        .statusCode,
    ).toBe(404)

    // Deleting a member user takes the membership with it, audited on the team.
    expect((await write({ method: 'DELETE', url: `/users/${u2.id}` })).statusCode).toBe(204)
    expect((await write({ method: 'GET', url: `/teams/${team.id}/members` })).json().items).toEqual([])
    expect(await auditActions(suite.t, 'acme', `resource_id=${team.id}&action=team.member_removed`)).toHaveLength(2)

    // Deleting the team takes its memberships, each audited.
    const u3 = await post('/users', { email: 'm3@example.com' })
    await add(u3.id)
    expect((await write({ method: 'DELETE', url: `/teams/${team.id}` })).statusCode).toBe(204)
    const removed = (
      await write({
        method: 'GET',
        url: `/audit_logs?resource_id=${team.id}&action=team.member_removed&sort=-created_at&page_limit=1`,
      })
    ).json().items[0]
    expect(removed).toMatchObject({ sub_object_id: u3.id, metadata: { reason: 'team.deleted' } })
    expect((await write({ method: 'GET', url: `/users/${u3.id}` })).statusCode).toBe(200)
  })

  it("lists a person's teams with member_id, paged, and no other tenant's", async () => {
    const ada = await post('/users', { email: 'member-of@example.com' })
    const other = await post('/users', { email: 'not-member@example.com' })
    const teams = []
    for (const name of ['Alpha', 'Beta', 'Gamma', 'Delta']) teams.push(await post('/teams', { name }))
    for (const team of [teams[0], teams[2], teams[3]]) {
      await write({ method: 'POST', url: `/teams/${team.id}/members`, payload: { user_id: ada.id } })
    }
    await write({ method: 'POST', url: `/teams/${teams[1].id}/members`, payload: { user_id: other.id } })
    const names = async (query: string) => {
      const got: string[] = []
      for (let after = ''; ; ) {
        const page = (await write({ method: 'GET', url: `/teams?${query}&page_limit=2${after}` })).json()
        got.push(...page.items.map((t: { name: string }) => t.name))
        if (!page.pagination.has_more) return got
        after = `&page_after=${page.pagination.next_cursor}`
      }
    }
    expect(await names(`member_id=${ada.id}&sort=name`)).toEqual(['Alpha', 'Delta', 'Gamma'])
    expect(await names(`member_id=${ada.id}&q=ta`)).toEqual(['Delta'])
    expect(await names(`member_id=${other.id}`)).toEqual(['Beta'])
    expect(await names('member_id=usr_nobody')).toEqual([])
    const globex = suite.t.as('globex', 'write')
    expect((await globex({ method: 'GET', url: `/teams?member_id=${ada.id}` })).json().items).toEqual([])
  })
})
