import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { publishedControl } from '../../helpers/policy.js'

// The use case list's filters on the workflow position and on the controls, as the console's dashboard links use them.

describeEachDialect('use case list filters: stage, step, control status, overdue', (dialect) => {
  let t: TestApp
  let write: ReturnType<TestApp['as']>
  const ids: Record<string, string> = {}
  beforeAll(async () => {
    t = await startTestApp(dialect)
    write = t.as('acme', 'write')
    await publishedControl(t, 'acme', 'LOG', { name: 'Logging' })
    const pack = await write({
      method: 'POST',
      url: '/policy_packs',
      payload: { key: 'P', name: 'Pack', controls: [{ key: 'LOG' }] },
    })
    expect(pack.statusCode, pack.body).toBe(201)
    for (const name of ['Overdue', 'Done', 'Bare', 'Moved']) {
      const res = await write({ method: 'POST', url: '/use_cases', payload: { name } })
      expect(res.statusCode, res.body).toBe(201)
      ids[name] = res.json().id
    }
    for (const [name, due] of [
      ['Overdue', '2020-01-01'],
      ['Done', '2020-01-01'],
    ]) {
      const applied = await write({
        method: 'POST',
        url: `/use_cases/${ids[name]}/policy_packs`,
        payload: { key: 'P', due_date: due },
      })
      expect(applied.statusCode, applied.body).toBe(201)
    }
    const [done] = (await write({ method: 'GET', url: `/use_cases/${ids.Done}/controls` })).json().items
    const patched = await write({
      method: 'PATCH',
      url: `/use_cases/${ids.Done}/controls/${done.id}`,
      payload: { status: 'implemented' },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    expect((await write({ method: 'POST', url: `/use_cases/${ids.Moved}/workflow/advance` })).statusCode).toBe(200)
  })
  afterAll(async () => t?.close())

  const names = async (query: string) => {
    const res = await write({ method: 'GET', url: `/use_cases?sort=name&${query}` })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().items.map((u: { name: string }) => u.name)
  }

  it('filters by workflow stage and step, and follows a move', async () => {
    const uc = (await write({ method: 'GET', url: `/use_cases/${ids.Moved}` })).json()
    expect(uc.workflow_stage_step).not.toBe('assessment')
    expect(await names(`workflow_stage_step=${uc.workflow_stage_step}`)).toEqual(['Moved'])
    expect(await names('workflow_stage_step=assessment')).toEqual(['Bare', 'Done', 'Overdue'])
    expect(await names(`workflow_stage_id=${uc.workflow_stage_id}`)).toContain('Moved')
    expect(await names(`workflow_stage_id=${uc.workflow_stage_id}&workflow_stage_step=assessment`)).not.toContain(
      'Moved',
    )
    expect(await names('workflow_stage_id=ws_nothing')).toEqual([])
    // A list read before a move answers the move afterwards (cached pages are not kept across it).
    expect((await write({ method: 'POST', url: `/use_cases/${ids.Bare}/workflow/advance` })).statusCode).toBe(200)
    expect(await names('workflow_stage_step=assessment')).toEqual(['Done', 'Overdue'])
  })

  it('filters by a control status and by overdue controls', async () => {
    expect(await names('control_status=implemented')).toEqual(['Done'])
    expect(await names('control_status=pending')).toEqual(['Overdue'])
    expect(await names('overdue_controls=true')).toEqual(['Overdue'])
    expect(await names('overdue_controls=false')).toEqual(['Bare', 'Done', 'Moved'])
  })

  it('answers the overdue list and the summary anew at midnight (UTC), with no write in between', async () => {
    // Only the clock is faked: the control falls due at midnight, and no write moves the tenant's audit chain.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-03-09T23:59:00Z') })
    try {
      const night = t.as('night', 'write')
      await publishedControl(t, 'night', 'LOG', { name: 'Logging' })
      const pack = { key: 'P', name: 'Pack', controls: [{ key: 'LOG' }] }
      expect((await night({ method: 'POST', url: '/policy_packs', payload: pack })).statusCode).toBe(201)
      const uc = (await night({ method: 'POST', url: '/use_cases', payload: { name: 'Due on the 9th' } })).json()
      const applied = { key: 'P', due_date: '2026-03-09' }
      expect(
        (await night({ method: 'POST', url: `/use_cases/${uc.id}/policy_packs`, payload: applied })).statusCode,
      ).toBe(201)
      const read = (url: string, etag?: string) =>
        night({ method: 'GET', url, headers: etag ? { 'if-none-match': etag } : {} })
      const overdue = '/use_cases?overdue_controls=true'
      for (let i = 0; i < 2; i++) {
        expect((await read(overdue)).json().items).toEqual([])
        expect((await read('/governance_summary')).json().overdue_use_cases_total).toBe(0)
      }
      const before = [
        (await read(overdue)).headers.etag as string,
        (await read('/governance_summary')).headers.etag as string,
      ]

      vi.setSystemTime(new Date('2026-03-10T00:00:30Z'))
      const list = await read(overdue, before[0])
      expect(list.statusCode).toBe(200)
      expect(list.json().items.map((u: { id: string }) => u.id)).toEqual([uc.id])
      const summary = await read('/governance_summary', before[1])
      expect(summary.statusCode).toBe(200)
      expect(summary.json()).toMatchObject({ as_of: '2026-03-10', overdue_use_cases_total: 1 })
      // Answers that do not depend on the day keep their ETag.
      expect((await read('/use_cases')).headers.etag).toMatch(/^"\d+-[0-9a-f]{16}"$/)
    } finally {
      vi.useRealTimers()
    }
  })

  it('refuses a step or status that does not exist, naming the parameter', async () => {
    for (const query of ['workflow_stage_step=done', 'control_status=finished', 'overdue_controls=maybe']) {
      const res = await write({ method: 'GET', url: `/use_cases?${query}` })
      expect(res.statusCode, query).toBe(400)
      expect(JSON.stringify(res.json().errors)).toContain(query.split('=')[0])
    }
  })
})
