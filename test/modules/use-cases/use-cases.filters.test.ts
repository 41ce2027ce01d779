import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { backfill } from '../../../src/db/migrations/2026-12-02T10-questionnaire-missing-required.js'
import { INTAKE_SECTIONS } from '../../helpers/governance.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { publishedControl } from '../../helpers/policy.js'

// The use case list's filters on the workflow position, the controls and the questionnaires, as the console's dashboard
// links use them.

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

describeEachDialect('use case list filter: questionnaire completion', (dialect) => {
  let t: TestApp
  let write: ReturnType<TestApp['as']>
  const ids: Record<string, string> = {}
  const ok = async (p: Promise<{ statusCode: number; body: string; json(): any }>, status = 200) => {
    const res = await p
    expect(res.statusCode, res.body).toBe(status)
    return res.json()
  }
  const answer = (name: string, key: string, answers: { question_id: string; value: unknown }[]) =>
    ok(write({ method: 'PUT', url: `/use_cases/${ids[name]}/questionnaires/${key}/answers`, payload: { answers } }))
  const ALL = [
    { question_id: 'decision', value: 'Scores applications' },
    { question_id: 'personal_data', value: true },
    { question_id: 'autonomy', value: 'advisory' },
  ]
  beforeAll(async () => {
    t = await startTestApp(dialect)
    write = t.as('acme', 'write')
    const admin = t.as('acme', 'admin')
    for (const [key, sections] of [
      ['INTAKE', INTAKE_SECTIONS],
      [
        'DPIA',
        [
          {
            id: 'dpia',
            title: 'DPIA',
            questions: [{ id: 'done', question: 'Done?', evidence_type: 'boolean', required: true }],
          },
        ],
      ],
      [
        'NOTES',
        [
          {
            id: 'notes',
            title: 'Notes',
            questions: [{ id: 'note', question: 'Anything else?', evidence_type: 'text' }],
          },
        ],
      ],
    ] as const)
      await ok(
        admin({ method: 'POST', url: '/questionnaires', payload: { key, name: key, target: 'use_case', sections } }),
        201,
      )
    for (const [name, questionnaire_ids] of [
      ['Answered', ['INTAKE']],
      ['Partial', ['INTAKE']],
      ['Mixed', ['INTAKE', 'DPIA']],
      ['Optional', ['NOTES']],
      ['Bare', []],
    ] as const)
      ids[name] = (await ok(write({ method: 'POST', url: '/use_cases', payload: { name, questionnaire_ids } }), 201)).id
    await answer('Answered', 'INTAKE', ALL)
    await answer('Partial', 'INTAKE', ALL.slice(0, 1))
    await answer('Mixed', 'INTAKE', ALL)
  })
  afterAll(async () => t?.close())

  const list = async (completion: string) => {
    const res = await write({ method: 'GET', url: `/use_cases?sort=name&questionnaire_completion=${completion}` })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().items.map((u: { name: string }) => u.name) as string[]
  }
  const lists = async () => ({
    complete: await list('complete'),
    incomplete: await list('incomplete'),
    none: await list('none'),
  })
  /** Each list's length is the summary's figure; the attachments add up as the summary counts them. */
  const expectSummaryAgrees = async (seen: Record<string, string[]>) => {
    const q = (await ok(write({ method: 'GET', url: '/governance_summary' }))).questionnaires
    expect(q.use_cases).toEqual({
      complete: seen.complete.length,
      incomplete: seen.incomplete.length,
      none: seen.none.length,
    })
    expect(q.complete + q.incomplete).toBe(q.attached)
  }

  it('splits the use cases into complete, incomplete and none, as the governance summary counts them', async () => {
    const seen = await lists()
    expect(seen).toEqual({
      complete: ['Answered', 'Optional'],
      incomplete: ['Mixed', 'Partial'],
      none: ['Bare'],
    })
    await expectSummaryAgrees(seen)
    // Attachments: INTAKE of Answered and of Mixed, and NOTES (nothing required) are complete; Partial's INTAKE and Mixed's DPIA are not.
    expect((await ok(write({ method: 'GET', url: '/governance_summary' }))).questionnaires).toMatchObject({
      attached: 5,
      complete: 3,
      incomplete: 2,
    })
  })

  it('moves a use case between the lists as answers complete or clear a questionnaire, fresh after every write', async () => {
    // Read twice before the write, so that the second is the kept page or cached answer a stale list would come from.
    for (let i = 0; i < 2; i++) expect(await list('incomplete')).toEqual(['Mixed', 'Partial'])
    await answer('Partial', 'INTAKE', ALL.slice(1))
    expect(await list('incomplete')).toEqual(['Mixed'])
    expect(await list('complete')).toEqual(['Answered', 'Optional', 'Partial'])
    await answer('Partial', 'INTAKE', [{ question_id: 'personal_data', value: null }])
    expect(await list('complete')).toEqual(['Answered', 'Optional'])
    expect(await list('incomplete')).toEqual(['Mixed', 'Partial'])
    await answer('Mixed', 'DPIA', [{ question_id: 'done', value: true }])
    expect(await list('complete')).toEqual(['Answered', 'Mixed', 'Optional'])
    await expectSummaryAgrees(await lists())
  })

  it('follows attaching and detaching, by route and by questionnaire_ids, and answers given on create', async () => {
    expect(await list('none')).toEqual(['Bare'])
    await ok(write({ method: 'POST', url: `/use_cases/${ids.Bare}/questionnaires`, payload: { key: 'DPIA' } }), 201)
    expect(await list('none')).toEqual([])
    expect(await list('incomplete')).toContain('Bare')
    await ok(write({ method: 'PATCH', url: `/use_cases/${ids.Bare}`, payload: { questionnaire_ids: ['NOTES'] } }))
    expect(await list('complete')).toContain('Bare')
    expect(await list('incomplete')).not.toContain('Bare')
    expect((await write({ method: 'DELETE', url: `/use_cases/${ids.Bare}/questionnaires/NOTES` })).statusCode).toBe(204)
    expect(await list('none')).toEqual(['Bare'])
    const created = await ok(
      write({
        method: 'POST',
        url: '/use_cases',
        payload: {
          name: 'Imported',
          questionnaire_ids: ['INTAKE+1'],
          questions: ALL.map((a) => ({ ...a, questionnaire_id: 'INTAKE' })),
        },
      }),
      201,
    )
    expect(await list('complete')).toContain('Imported')
    expect((await write({ method: 'DELETE', url: `/use_cases/${created.id}` })).statusCode).toBe(204)
    await expectSummaryAgrees(await lists())
  })

  it("keeps each attachment's stored count equal to the progress its questionnaire shows, and the migration computes it", async () => {
    const { db } = t.deps.database
    const stored = async () =>
      (
        await db
          .selectFrom('use_case_questionnaires')
          .select(['use_case_id', 'questionnaire_key', 'missing_required'])
          .orderBy('use_case_id')
          .orderBy('questionnaire_key')
          .execute()
      ).map((r) => ({ ...r, missing_required: Number(r.missing_required) }))
    const now = await stored()
    expect(now.length).toBeGreaterThan(0)
    for (const row of now) {
      const { progress } = await ok(
        write({ method: 'GET', url: `/use_cases/${row.use_case_id}/questionnaires/${row.questionnaire_key}` }),
      )
      expect(row.missing_required, `${row.use_case_id} ${row.questionnaire_key}`).toBe(
        progress.required - progress.required_answered,
      )
    }
    // As a database migrated from before the column: every count 0, then the migration's backfill.
    await db.updateTable('use_case_questionnaires').set({ missing_required: 0 }).execute()
    await db.transaction().execute(backfill)
    expect(await stored()).toEqual(now)
  })

  it('refuses a completion that does not exist, naming the parameter', async () => {
    const res = await write({ method: 'GET', url: '/use_cases?questionnaire_completion=partial' })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(JSON.stringify(res.json().errors)).toContain('questionnaire_completion')
  })
})
