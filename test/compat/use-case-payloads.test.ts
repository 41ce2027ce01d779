import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

const sections = [
  {
    id: 's1',
    title: 'Purpose',
    questions: [{ id: 'purpose', question: 'What does it decide?', evidence_type: 'text' }],
  },
]

describeEachDialect('use case payloads the integrations send', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
    const write = t.as('acme', 'write')
    for (const [key, target] of [
      ['INTAKE', 'use_case'],
      ['INTAKE', 'use_case'],
      ['DPIA', 'use_case'],
      ['MODEL-CARD', 'model'],
    ]) {
      const res = await write({ method: 'POST', url: '/questionnaires', payload: { key, name: key, target, sections } })
      expect(res.statusCode, res.body).toBe(201)
    }
    // Another tenant's questionnaire with a key acme does not have.
    await t.as(
      'globex',
      'write',
    )({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'SECRET', name: 'Secret', target: 'use_case', sections },
    })
  })
  afterAll(async () => t?.close())

  const write = () => t.as('acme', 'write')
  const read = () => t.as('acme', 'read')
  const attachedKeys = async (id: string) =>
    (await read()({ method: 'GET', url: `/use_cases/${id}/questionnaires` }))
      .json()
      .items.map((q: { key: string; version: number }) => `${q.key}+${q.version}`)
      .sort()
  const auditOf = async (id: string) =>
    (await read()({ method: 'GET', url: `/audit_logs?use_case_id=${id}&page_limit=100` }))
      .json()
      .items.map((a: { action: string; sub_object_name: string | null; request_id: string }) => ({
        action: a.action,
        what: a.sub_object_name,
        request_id: a.request_id,
      }))

  it('attaches questionnaire_ids on create in the same transaction, with their audit records', async () => {
    const res = await write()({
      method: 'POST',
      url: '/use_cases',
      payload: { name: 'Intake from Jira', questionnaire_ids: ['INTAKE+1', 'DPIA'] },
    })
    expect(res.statusCode, res.body).toBe(201)
    const uc = res.json()
    expect(uc.questionnaire_ids).toEqual(['DPIA+1', 'INTAKE+1'])
    expect((await read()({ method: 'GET', url: `/use_cases/${uc.id}` })).json().questionnaire_ids).toEqual([
      'DPIA+1',
      'INTAKE+1',
    ])
    expect(await attachedKeys(uc.id)).toEqual(['DPIA+1', 'INTAKE+1'])
    const audit = await auditOf(uc.id)
    expect(audit.map((a: { action: string }) => a.action).sort()).toEqual([
      'questionnaire.attached',
      'questionnaire.attached',
      'use_case.created',
    ])
    expect(new Set(audit.map((a: { request_id: string }) => a.request_id)).size).toBe(1)
  })

  it('replaces the attached set on PATCH: detaches the missing, attaches the new, moves a key to another version', async () => {
    const uc = (
      await write()({
        method: 'POST',
        url: '/use_cases',
        payload: { name: 'Replace me', questionnaire_ids: ['INTAKE+1', 'DPIA+1'] },
      })
    ).json()
    const patched = await write()({
      method: 'PATCH',
      url: `/use_cases/${uc.id}`,
      payload: { questionnaire_ids: ['INTAKE+2'], description: 'now v2' },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    expect(patched.json()).toMatchObject({ questionnaire_ids: ['INTAKE+2'], description: 'now v2' })
    expect(await attachedKeys(uc.id)).toEqual(['INTAKE+2'])
    const actions = (await auditOf(uc.id)).map((a: { action: string; what: string }) =>
      `${a.action} ${a.what ?? ''}`.trim(),
    )
    expect(actions.slice(-4).sort()).toEqual([
      'questionnaire.attached INTAKE+2',
      'questionnaire.detached DPIA+1',
      'questionnaire.detached INTAKE+1',
      'use_case.updated',
    ])

    const same = await write()({
      method: 'PATCH',
      url: `/use_cases/${uc.id}`,
      payload: { questionnaire_ids: ['INTAKE'] },
    })
    expect(same.json().questionnaire_ids).toEqual(['INTAKE+2'])
    expect(await auditOf(uc.id)).toHaveLength(actions.length)

    const cleared = await write()({ method: 'PATCH', url: `/use_cases/${uc.id}`, payload: { questionnaire_ids: [] } })
    expect(cleared.json().questionnaire_ids).toEqual([])
    expect(await attachedKeys(uc.id)).toEqual([])
  })

  it('refuses unknown, other-tenant, wrong-target, missing-version and repeated questionnaires with one 422 naming each, changing nothing', async () => {
    const bad = await write()({
      method: 'POST',
      url: '/use_cases',
      payload: {
        name: 'Never created',
        questionnaire_ids: ['INTAKE+1', 'NOPE+1', 'SECRET', 'MODEL-CARD+1', 'INTAKE+9', 'INTAKE+2'],
      },
    })
    expect(bad.statusCode).toBe(422)
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toEqual([
      'questionnaire_ids/1',
      'questionnaire_ids/2',
      'questionnaire_ids/3',
      'questionnaire_ids/4',
      'questionnaire_ids/5',
    ])
    expect((await read()({ method: 'GET', url: '/use_cases?q=never' })).json().items).toEqual([])

    const uc = (
      await write()({ method: 'POST', url: '/use_cases', payload: { name: 'Keep me', questionnaire_ids: ['DPIA+1'] } })
    ).json()
    const patch = await write()({
      method: 'PATCH',
      url: `/use_cases/${uc.id}`,
      payload: { name: 'Renamed', questionnaire_ids: ['NOPE'] },
    })
    expect(patch.statusCode).toBe(422)
    expect((await read()({ method: 'GET', url: `/use_cases/${uc.id}` })).json()).toMatchObject({
      name: 'Keep me',
      questionnaire_ids: ['DPIA+1'],
    })

    for (const value of [null, 'INTAKE+1', ['INTAKE+0'], ['bad key']]) {
      const res = await write()({
        method: 'POST',
        url: '/use_cases',
        payload: { name: 'Bad list', questionnaire_ids: value },
      })
      expect(res.statusCode, JSON.stringify(value)).toBe(422)
      expect(res.json().errors[0].field).toMatch(/^questionnaire_ids/)
    }
  })

  it('saves questions (answers) given on create in the same transaction, and refuses bad ones naming each, creating nothing', async () => {
    const res = await write()({
      method: 'POST',
      url: '/use_cases',
      payload: {
        name: 'Answered on intake',
        questionnaire_ids: ['INTAKE+1', 'DPIA'],
        questions: [
          { question_id: 'purpose', questionnaire_id: 'INTAKE+1', section_id: 's1', value: 'scoring' },
          { question_id: 'purpose', questionnaire_id: 'DPIA', value: 'none' },
        ],
      },
    })
    expect(res.statusCode, res.body).toBe(201)
    const id = res.json().id
    const intake = (await read()({ method: 'GET', url: `/use_cases/${id}/questionnaires/INTAKE` })).json()
    expect(intake.answers).toEqual([
      expect.objectContaining({ question_id: 'purpose', section_id: 's1', value: 'scoring' }),
    ])
    expect((await read()({ method: 'GET', url: `/use_cases/${id}/questionnaires/DPIA` })).json().answers[0].value).toBe(
      'none',
    )
    const audit = await auditOf(id)
    expect(audit.filter((a: { action: string }) => a.action === 'questionnaire.answered')).toHaveLength(2)
    expect(new Set(audit.map((a: { request_id: string }) => a.request_id)).size).toBe(1)

    const bad = await write()({
      method: 'POST',
      url: '/use_cases',
      payload: {
        name: 'Badly answered',
        questionnaire_ids: ['INTAKE+1'],
        questions: [
          { question_id: 'purpose', questionnaire_id: 'INTAKE+1', value: 42 },
          { question_id: 'nope', questionnaire_id: 'INTAKE+1', value: 'x' },
          { question_id: 'purpose', questionnaire_id: 'DPIA+1', value: 'x' },
        ],
      },
    })
    expect(bad.statusCode).toBe(422)
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toEqual(['questions/2/questionnaire_id'])
    const wrongValue = await write()({
      method: 'POST',
      url: '/use_cases',
      payload: {
        name: 'Badly answered',
        questionnaire_ids: ['INTAKE+1'],
        questions: [
          { question_id: 'purpose', questionnaire_id: 'INTAKE+1', value: 42 },
          { question_id: 'nope', questionnaire_id: 'INTAKE+1', value: 'x' },
        ],
      },
    })
    expect(wrongValue.json().errors.map((e: { field: string }) => e.field)).toEqual([
      'questions/0/value',
      'questions/1/question_id',
    ])
    expect((await read()({ method: 'GET', url: '/use_cases?q=badly' })).json().items).toEqual([])
  })

  it('answers unknown custom fields and owners with 422 naming the member; nothing is written', async () => {
    const bodies: [string, Record<string, unknown>][] = [
      [
        'custom_fields/0/custom_field_id',
        { custom_fields: [{ custom_field_id: 'cf_01jd3k8m9v4q2w6e8r0t2y4u6i', value: 'x' }] },
      ],
      ['owner/owner_id', { owner: { owner_id: 'usr_01jd3k8m9v4q2w6e8r0t2y4u6i', owner_type: 'user' } }],
    ]
    for (const [field, extra] of bodies) {
      const res = await write()({ method: 'POST', url: '/use_cases', payload: { name: `With ${field}`, ...extra } })
      expect(res.statusCode, field).toBe(422)
      expect(res.json().errors).toEqual([{ field, message: expect.any(String) }])
    }
    expect((await read()({ method: 'GET', url: '/use_cases?q=with' })).json().items).toEqual([])
  })

  it('takes the create payload of the original SDK: questionnaire_ids, custom_fields and an owner in one request', async () => {
    const owner = (
      await write()({ method: 'POST', url: '/users', payload: { email: 'intake@example.com', name: 'Intake desk' } })
    ).json()
    const field = (
      await t.as('acme', 'admin')({ method: 'POST', url: '/custom_fields', payload: { name: 'Jira key' } })
    ).json()
    const res = await write()({
      method: 'POST',
      url: '/use_cases',
      payload: {
        name: 'Synced from Jira',
        questionnaire_ids: ['INTAKE+1'],
        custom_fields: [{ custom_field_id: field.id, value: 'AI-42' }],
        owner: { owner_id: owner.id, owner_type: 'user' },
      },
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({
      questionnaire_ids: ['INTAKE+1'],
      custom_fields: [{ custom_field_id: field.id, name: 'Jira key', value: 'AI-42' }],
      owner: { owner_id: owner.id, owner_type: 'user', name: 'Intake desk' },
    })
  })
})
