import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { publishedControl } from '../../helpers/policy.js'
import { INTAKE_SECTIONS, multipart } from '../../helpers/governance.js'

describeEachDialect('governance process: control evidence, gated workflow, summary', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
    await publishedControl(t, 'acme', 'OVERSIGHT', {
      name: 'Human oversight',
      evidence_requirements: [
        { type: 'file', description: 'Oversight procedure', required: true },
        { type: 'link', description: 'Training record', required: false },
      ],
    })
    await publishedControl(t, 'acme', 'LOGGING', {
      name: 'Event logging',
      evidence_requirements: [{ type: 'file', description: 'Log retention policy', required: true }],
    })
    await publishedControl(t, 'acme', 'NOTICE', { name: 'Transparency notice' })
    const pack = await t.as(
      'acme',
      'write',
    )({
      method: 'POST',
      url: '/policy_packs',
      payload: { key: 'CORE', name: 'Core', controls: [{ key: 'OVERSIGHT' }, { key: 'LOGGING' }, { key: 'NOTICE' }] },
    })
    expect(pack.statusCode, pack.body).toBe(201)
    const q = await t.as(
      'acme',
      'write',
    )({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'INTAKE', name: 'Intake', target: 'use_case', sections: INTAKE_SECTIONS },
    })
    expect(q.statusCode, q.body).toBe(201)
  })
  afterAll(async () => t?.close())
  const write = () => t.as('acme', 'write')
  const read = () => t.as('acme', 'read')

  const setUp = async (name: string) => {
    const uc = (await write()({ method: 'POST', url: '/use_cases', payload: { name } })).json()
    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc.id}/questionnaires`, payload: { key: 'INTAKE' } }))
        .statusCode,
    ).toBe(201)
    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc.id}/policy_packs`, payload: { key: 'CORE' } })).statusCode,
    ).toBe(201)
    const controls = (await read()({ method: 'GET', url: `/use_cases/${uc.id}/controls` })).json().items as {
      id: string
      control_key: string
    }[]
    return { id: uc.id as string, control: (key: string) => controls.find((c) => c.control_key === key)!.id }
  }
  const uploadFile = async (text: string) => {
    const { body, contentType } = multipart([
      { name: 'file', value: text, filename: `${text}.txt`, type: 'text/plain' },
    ])
    const res = await write()({
      method: 'POST',
      url: '/evidence',
      payload: body,
      headers: { 'content-type': contentType },
    })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id as string
  }

  it('links evidence to controls (idempotent), shows evidence_count and met per requirement, unlinks, and audits', async () => {
    const uc = await setUp('Control evidence')
    const oversight = uc.control('OVERSIGHT')
    const ev = await uploadFile('procedure')
    const url = `/use_cases/${uc.id}/controls/${oversight}/evidence`
    const first = await write()({ method: 'POST', url, payload: { evidence_id: ev, requirement: 0 } })
    expect(first.statusCode, first.body).toBe(201)
    expect(first.json()).toMatchObject({
      use_case_control_id: oversight,
      evidence_id: ev,
      requirement: 0,
      evidence: { id: ev, kind: 'file' },
    })
    expect((await write()({ method: 'POST', url, payload: { evidence_id: ev, requirement: 0 } })).statusCode).toBe(200)

    const control = (await read()({ method: 'GET', url: `/use_cases/${uc.id}/controls/${oversight}` })).json()
    expect(control.evidence_count).toBe(1)
    expect(control.evidence_requirements).toEqual([
      {
        requirement: 0,
        type: 'file',
        description: 'Oversight procedure',
        required: true,
        met: true,
        evidence_ids: [ev],
      },
      { requirement: 1, type: 'link', description: 'Training record', required: false, met: false, evidence_ids: [] },
    ])
    expect(
      (await read()({ method: 'GET', url })).json().items.map((l: { evidence_id: string }) => l.evidence_id),
    ).toEqual([ev])
    expect(
      (await read()({ method: 'GET', url: `/evidence?use_case_id=${uc.id}` }))
        .json()
        .items.map((e: { id: string }) => e.id),
    ).toEqual([ev])

    // In use: the evidence cannot be deleted.
    const del = await write()({ method: 'DELETE', url: `/evidence/${ev}` })
    expect(del.statusCode).toBe(409)
    expect(del.json().detail).toContain(oversight)

    const bad = [
      [{ evidence_id: 'ev_00000000000000000000000000' }, 'evidence_id'],
      [{ evidence_id: ev, requirement: 5 }, 'requirement'],
      [{ evidence_id: ev, extra: true }, 'extra'],
    ] as const
    for (const [payload, field] of bad) {
      const res = await write()({ method: 'POST', url, payload })
      expect(res.statusCode).toBe(422)
      expect(res.json().errors[0].field).toBe(field)
    }
    const foreign = (
      await t.as(
        'globex',
        'write',
      )({ method: 'POST', url: '/evidence', payload: { kind: 'link', url: 'https://x.example', title: 'x' } })
    ).json().id
    expect((await write()({ method: 'POST', url, payload: { evidence_id: foreign } })).statusCode).toBe(422)
    expect((await t.as('globex', 'admin')({ method: 'GET', url })).statusCode).toBe(404)
    expect((await t.as('globex', 'admin')({ method: 'POST', url, payload: { evidence_id: foreign } })).statusCode).toBe(
      404,
    )

    // A control with a single requirement takes links without `requirement` for it.
    const logging = uc.control('LOGGING')
    const policy = await uploadFile('retention')
    const single = await write()({
      method: 'POST',
      url: `/use_cases/${uc.id}/controls/${logging}/evidence`,
      payload: { evidence_id: policy },
    })
    expect(single.json().requirement).toBe(0)

    expect((await write()({ method: 'DELETE', url: `${url}/${ev}` })).statusCode).toBe(204)
    expect((await write()({ method: 'DELETE', url: `${url}/${ev}` })).statusCode).toBe(404)
    expect(
      (await read()({ method: 'GET', url: `/use_cases/${uc.id}/controls/${oversight}` })).json().evidence_count,
    ).toBe(0)
    const actions = (await read()({ method: 'GET', url: `/audit_logs?resource_id=${oversight}&page_limit=100` }))
      .json()
      .items.map((a: { action: string }) => a.action)
    expect(actions.filter((a: string) => a.includes('evidence'))).toEqual([
      'use_case_control.evidence_linked',
      'use_case_control.evidence_unlinked',
    ])
    expect((await write()({ method: 'DELETE', url: `/evidence/${ev}` })).statusCode).toBe(204)
  })

  it('gates the workflow: assessment needs the required answers, evidence collection the required evidence (409 process_incomplete)', async () => {
    const uc = await setUp('Gated')
    const advance = () => write()({ method: 'POST', url: `/use_cases/${uc.id}/workflow/advance` })

    const blocked = await advance()
    expect(blocked.statusCode).toBe(409)
    expect(blocked.json().code).toBe('process_incomplete')
    expect(blocked.json().errors.map((e: { field: string }) => e.field)).toEqual([
      'questionnaires/INTAKE/decision',
      'questionnaires/INTAKE/personal_data',
      'questionnaires/INTAKE/autonomy',
    ])
    expect((await read()({ method: 'GET', url: `/use_cases/${uc.id}/workflow` })).json().workflow_stage_step).toBe(
      'assessment',
    )

    await write()({
      method: 'PUT',
      url: `/use_cases/${uc.id}/questionnaires/INTAKE/answers`,
      payload: {
        answers: [
          { question_id: 'decision', value: 'Loans' },
          { question_id: 'personal_data', value: true },
          { question_id: 'autonomy', value: 'advisory' },
        ],
      },
    })
    const summary = (await read()({ method: 'GET', url: '/governance_summary' })).json()
    expect(summary.questionnaires.complete).toBeGreaterThanOrEqual(1)

    const toEvidence = await advance()
    expect(toEvidence.statusCode, toEvidence.body).toBe(200)
    expect(toEvidence.json().workflow_stage_step).toBe('evidence_collection')

    const missing = await advance()
    expect(missing.statusCode).toBe(409)
    expect(missing.json().errors).toEqual([
      {
        field: `controls/${uc.control('LOGGING')}/evidence_requirements/0`,
        message: 'control LOGGING: required evidence "Log retention policy" has none linked',
      },
      {
        field: `controls/${uc.control('OVERSIGHT')}/evidence_requirements/0`,
        message: 'control OVERSIGHT: required evidence "Oversight procedure" has none linked',
      },
    ])
    const before = (await read()({ method: 'GET', url: '/governance_summary' })).json().controls.missing_evidence

    await write()({
      method: 'POST',
      url: `/use_cases/${uc.id}/controls/${uc.control('OVERSIGHT')}/evidence`,
      payload: { evidence_id: await uploadFile('gated procedure'), requirement: 0 },
    })
    // A control that does not apply needs no evidence.
    await write()({
      method: 'PATCH',
      url: `/use_cases/${uc.id}/controls/${uc.control('LOGGING')}`,
      payload: { status: 'not_applicable' },
    })
    expect((await read()({ method: 'GET', url: '/governance_summary' })).json().controls.missing_evidence).toBe(
      before - 2,
    )

    const cleared = await advance()
    expect(cleared.statusCode, cleared.body).toBe(200)
    expect(cleared.json().workflow_stage_step).toBe('clear')
  })

  it('runs the whole process: create, answer, attach evidence, advance through the gates, then the dossier holds it all', async () => {
    const uc = await setUp('Full process')
    const model = (
      await write()({ method: 'POST', url: '/models', payload: { name: 'Full process model', provider: 'Acme ML' } })
    ).json()
    await write()({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: model.id } })
    const dpia = await uploadFile('dpia')
    await write()({
      method: 'PUT',
      url: `/use_cases/${uc.id}/questionnaires/INTAKE/answers`,
      payload: {
        answers: [
          { question_id: 'decision', value: 'Credit <b>limits</b>' },
          { question_id: 'personal_data', value: false },
          { question_id: 'autonomy', value: 'advisory' },
          { question_id: 'dpia', value: dpia },
        ],
      },
    })
    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc.id}/workflow/advance` })).json().workflow_stage_step,
    ).toBe('evidence_collection')
    const procedure = await uploadFile('full procedure')
    const retention = (
      await write()({
        method: 'POST',
        url: '/evidence',
        payload: { kind: 'link', url: 'https://wiki.example.com/retention', title: 'Retention policy' },
      })
    ).json().id
    await write()({
      method: 'POST',
      url: `/use_cases/${uc.id}/controls/${uc.control('OVERSIGHT')}/evidence`,
      payload: { evidence_id: procedure, requirement: 0 },
    })
    await write()({
      method: 'POST',
      url: `/use_cases/${uc.id}/controls/${uc.control('LOGGING')}/evidence`,
      payload: { evidence_id: retention },
    })
    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc.id}/workflow/advance` })).json().workflow_stage_step,
    ).toBe('clear')

    const res = await read()({ method: 'GET', url: `/use_cases/${uc.id}/dossier` })
    expect(res.statusCode, res.body).toBe(200)
    const d = res.json()
    expect(d.use_case).toMatchObject({ id: uc.id, name: 'Full process' })
    expect(d.workflow).toMatchObject({ workflow_stage_step: 'clear' })
    expect(d.workflow_history.map((h: { action: string }) => h.action)).toEqual([
      'use_case.created',
      'use_case.workflow_advanced',
      'use_case.workflow_advanced',
    ])
    // Machines read stage ids in the history, and find their names beside it.
    const stage = d.workflow.workflow_stage
    expect(d.workflow_history[0].changes.workflow_stage_id).toEqual([null, stage.id])
    expect(d.workflow_stage_names).toEqual({ [stage.id]: stage.name })
    expect(d.models.map((m: { id: string }) => m.id)).toEqual([model.id])
    expect(d.policy_packs.map((p: { key: string }) => p.key)).toEqual(['CORE'])
    expect(d.controls.map((c: { control_key: string }) => c.control_key)).toEqual(['LOGGING', 'NOTICE', 'OVERSIGHT'])
    const oversight = d.controls.find((c: { control_key: string }) => c.control_key === 'OVERSIGHT')
    expect(oversight.evidence).toEqual([
      expect.objectContaining({
        requirement: 0,
        evidence: expect.objectContaining({
          id: procedure,
          content_path: `/api/v1/integration/evidence/${procedure}/content`,
        }),
      }),
    ])
    expect(d.questionnaires[0]).toMatchObject({ key: 'INTAKE', progress: { complete: true } })
    expect(d.questionnaires[0].sections).toHaveLength(2)
    expect(d.evidence.map((e: { id: string }) => e.id).sort()).toEqual([dpia, procedure, retention].sort())
    expect(d.gaps).toEqual({ missing_answers: [], missing_evidence: [] })

    const html = await read()({ method: 'GET', url: `/use_cases/${uc.id}/dossier?format=html` })
    expect(html.statusCode).toBe(200)
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(html.body).toContain('Credit &#60;b&#62;limits&#60;/b&#62;')
    expect(html.body).not.toMatch(/<script|src=|href="http/)
    // People read the stage's name in every history row, never its id.
    const history = html.body.slice(
      html.body.indexOf('<h3>History</h3>'),
      html.body.indexOf('</section>', html.body.indexOf('<h3>History</h3>')),
    )
    expect(history).not.toContain('ws_')
    expect(history.match(/<tr><td>/g)).toHaveLength(3)
    expect(history.split(`<td>${stage.name}</td>`)).toHaveLength(4)
    expect((await t.as('globex', 'admin')({ method: 'GET', url: `/use_cases/${uc.id}/dossier` })).statusCode).toBe(404)
    expect((await read()({ method: 'GET', url: `/use_cases/${uc.id}/dossier?format=pdf` })).statusCode).toBe(400)
  })
})
