import { expect, it } from 'vitest'
import { describeEachDialect } from '../../helpers/harness.js'
import { publishedControl } from '../../helpers/policy.js'
import { suiteApp } from '../../helpers/suite-app.js'

interface Listed {
  id: string
  use_case_id: string
  use_case_name: string
  control_key: string
  status: string
  due_date: string | null
  assignee: { owner_id: string; owner_type: string; name: string } | null
  evidence_requirements: unknown[]
}

describeEachDialect("the tenant's controls in one list", (dialect) => {
  const suite = suiteApp(dialect)
  const { write, post } = suite
  const list = async (query: string, tenant = 'acme') => {
    const res = await suite.t.as(tenant, 'read')({ method: 'GET', url: `/use_case_controls${query}` })
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as { items: Listed[]; pagination: { has_more: boolean; next_cursor: string | null } }
  }

  it('lists controls across use cases by assignee, openness and overdueness, paged, each with its use case', async () => {
    for (const key of ['TC-A', 'TC-B', 'TC-C']) await publishedControl(suite.t, 'acme', key)
    await post('/policy_packs', {
      key: 'TC',
      name: 'Work',
      controls: [{ key: 'TC-A' }, { key: 'TC-B' }, { key: 'TC-C' }],
    })
    const late = await post('/use_cases', { name: 'Late one' })
    const timely = await post('/use_cases', { name: 'Timely one' })
    await post(`/use_cases/${late.id}/policy_packs`, { key: 'TC', due_date: '2020-01-01' })
    await post(`/use_cases/${timely.id}/policy_packs`, { key: 'TC', due_date: '2999-01-01' })
    const bo = await post('/users', { email: 'bo@example.com', name: 'Bo' })
    const team = await post('/teams', { name: 'Implementers' })
    const controlsOf = async (id: string) =>
      (await write({ method: 'GET', url: `/use_cases/${id}/controls` })).json().items as Listed[]
    const [l, t] = [await controlsOf(late.id), await controlsOf(timely.id)]
    const patch = async (uc: string, c: Listed, body: object) => {
      const res = await write({ method: 'PATCH', url: `/use_cases/${uc}/controls/${c.id}`, payload: body })
      expect(res.statusCode, res.body).toBe(200)
    }
    await patch(late.id, l[0], { assignee: { owner_id: bo.id } })
    await patch(late.id, l[1], { assignee: { owner_id: bo.id }, status: 'implemented' })
    await patch(late.id, l[2], { assignee: { owner_id: team.id } })
    await patch(timely.id, t[0], { assignee: { owner_id: bo.id }, status: 'in_progress' })

    const bos = await list(`?assignee_id=${bo.id}`)
    expect(bos.items.map((c) => c.id)).toEqual([l[0].id, l[1].id, t[0].id])
    expect(bos.items[0]).toMatchObject({
      use_case_id: late.id,
      use_case_name: 'Late one',
      control_key: 'TC-A',
      assignee: { owner_id: bo.id, owner_type: 'user', name: 'Bo' },
      due_date: '2020-01-01',
    })
    expect(bos.items[2].use_case_name).toBe('Timely one')

    expect((await list(`?assignee_id=${bo.id}&open=true`)).items.map((c) => c.id)).toEqual([l[0].id, t[0].id])
    expect((await list(`?assignee_id=${bo.id}&open=false`)).items.map((c) => c.id)).toEqual([l[1].id])
    expect((await list(`?assignee_id=${bo.id}&overdue=true`)).items.map((c) => c.id)).toEqual([l[0].id])
    expect((await list(`?assignee_id=${bo.id}&overdue=false`)).items.map((c) => c.id)).toEqual([l[1].id, t[0].id])
    expect((await list(`?assignee_id=${team.id}`)).items.map((c) => c.id)).toEqual([l[2].id])
    expect((await list('?overdue=true')).items.map((c) => c.id)).toEqual([l[0].id, l[2].id])
    expect((await list('?status=in_progress')).items.map((c) => c.id)).toEqual([t[0].id])
    expect((await list('?policy_pack_key=TC')).items).toHaveLength(6)

    // Paged: the same query with each page's cursor.
    const seen: string[] = []
    let page = await list(`?assignee_id=${bo.id}&page_limit=1`)
    for (;;) {
      expect(page.items).toHaveLength(1)
      seen.push(page.items[0].id)
      if (!page.pagination.has_more) break
      page = await list(
        `?assignee_id=${bo.id}&page_limit=1&page_after=${encodeURIComponent(page.pagination.next_cursor ?? '')}`,
      )
    }
    expect(seen).toEqual([l[0].id, l[1].id, t[0].id])

    // A renamed use case is named anew in the list.
    await write({ method: 'PATCH', url: `/use_cases/${late.id}`, payload: { name: 'Late, renamed' } })
    expect((await list(`?assignee_id=${bo.id}&open=true`)).items[0].use_case_name).toBe('Late, renamed')

    // Another tenant sees none of them, whatever it asks for.
    expect((await list(`?assignee_id=${bo.id}`, 'other')).items).toEqual([])
    expect((await list('', 'other')).items).toEqual([])
  })

  it('refuses bad parameters with a problem that names them', async () => {
    for (const [query, field] of [
      ['?open=maybe', 'open'],
      ['?status=done', 'status'],
      ['?page_limit=1000', 'page_limit'],
      ['?assignee=usr_x', 'assignee'],
    ]) {
      const res = await suite.t.as('acme', 'read')({ method: 'GET', url: `/use_case_controls${query}` })
      expect(res.statusCode, query).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(JSON.stringify(res.json().errors), query).toContain(field)
    }
  })
})
