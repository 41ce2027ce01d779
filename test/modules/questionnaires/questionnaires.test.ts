import { afterAll, beforeAll, expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { auditActions } from '../../helpers/policy.js'

const sections = (prefix = 's') => [
  {
    id: `${prefix}1`,
    title: 'Purpose',
    questions: [
      { id: 'purpose', question: 'What does the system decide or recommend?', evidence_type: 'text', required: true },
      {
        id: 'autonomy',
        question: 'How autonomous is it?',
        evidence_type: 'select',
        select_options: ['advisory', 'human-in-the-loop', 'autonomous'],
      },
    ],
  },
]

describeEachDialect('questionnaires: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/questionnaires',
    resourceType: 'questionnaire',
    idPrefix: 'q',
    validBody: (i) => ({ key: `Q-${i}`, name: `Questionnaire ${i}`, target: 'use_case', sections: sections() }),
    updateBody: null,
    deletable: false,
  })
})

describeEachDialect('questionnaires', (dialect) => {
  let t: TestApp
  const tenant = 'acme'
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())
  const write = () => t.as(tenant, 'write')
  const read = () => t.as(tenant, 'read')

  const insertModel = async (name: string) => {
    const at = new Date().toISOString()
    const id = `mdl_${Math.random().toString(36).slice(2, 12).padEnd(10, '0')}${Date.now().toString(36).padStart(16, '0')}`
    await t.deps.database.db
      .insertInto('models')
      .values({
        id,
        tenant_id: tenant,
        name,
        name_key: name.toLowerCase(),
        summary: null,
        source: null,
        status: 'none',
        provider: null,
        model_type: null,
        version: null,
        created_at: at,
        updated_at: at,
      })
      .execute()
    return id
  }

  it('publishes versions by key and gets them by key, ?version= or id', async () => {
    const v1 = await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'INTAKE', name: 'Intake', target: 'use_case', sections: sections() },
    })
    expect(v1.statusCode, v1.body).toBe(201)
    expect(v1.json()).toMatchObject({ key: 'INTAKE', version: 1, questionnaire_id: 'INTAKE+1', latest: true })
    expect(v1.json().sections[0].questions[0]).toEqual({
      id: 'purpose',
      question: 'What does the system decide or recommend?',
      evidence_type: 'text',
      multiple: false,
      select_options: [],
      required: true,
    })
    const v2 = await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'INTAKE', name: 'Intake (revised)', target: 'use_case', sections: sections('t') },
    })
    expect(v2.json().version).toBe(2)

    expect((await read()({ method: 'GET', url: '/questionnaires/INTAKE' })).json().version).toBe(2)
    expect((await read()({ method: 'GET', url: '/questionnaires/INTAKE?version=1' })).json()).toMatchObject({
      version: 1,
      latest: false,
      name: 'Intake',
    })
    expect((await read()({ method: 'GET', url: `/questionnaires/${v1.json().id}` })).json().version).toBe(1)
    expect((await read()({ method: 'GET', url: '/questionnaires/INTAKE?version=3' })).statusCode).toBe(404)
    expect((await read()({ method: 'GET', url: '/questionnaires?key=INTAKE' })).json().items).toHaveLength(1)
    expect(
      (await read()({ method: 'GET', url: '/questionnaires?key=INTAKE&all_versions=true' })).json().items,
    ).toHaveLength(2)

    const retarget = await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'INTAKE', name: 'Intake', target: 'model', sections: sections() },
    })
    expect(retarget.statusCode).toBe(422)
    expect(retarget.json().errors[0].field).toBe('target')
  })

  it('validates ids, select options and the question limit (422 naming the field)', async () => {
    const post = (body: Record<string, unknown>) =>
      write()({
        method: 'POST',
        url: '/questionnaires',
        payload: { key: 'BAD', name: 'Bad', target: 'use_case', ...body },
      })
    const dupSection = await post({ sections: [...sections(), ...sections()] })
    expect(dupSection.statusCode).toBe(422)
    expect(dupSection.json().errors.map((e: { field: string }) => e.field)).toEqual([
      'sections/1/id',
      'sections/1/questions/0/id',
      'sections/1/questions/1/id',
    ])

    const noOptions = await post({
      sections: [{ id: 'a', title: 'A', questions: [{ id: 'q', question: 'Pick', evidence_type: 'select' }] }],
    })
    expect(noOptions.json().errors).toEqual([
      { field: 'sections/0/questions/0/select_options', message: 'a select question needs select_options' },
    ])
    const strayOptions = await post({
      sections: [
        {
          id: 'a',
          title: 'A',
          questions: [{ id: 'q', question: 'Text', evidence_type: 'text', select_options: ['x'] }],
        },
      ],
    })
    expect(strayOptions.json().errors[0].field).toBe('sections/0/questions/0/select_options')
    const badType = await post({
      sections: [{ id: 'a', title: 'A', questions: [{ id: 'q', question: 'Text', evidence_type: 'essay' }] }],
    })
    expect(badType.statusCode).toBe(422)
    expect(badType.json().errors[0].field).toBe('sections/0/questions/0/evidence_type')

    const many = (n: number, s: string) =>
      Array.from({ length: n }, (_, i) => ({ id: `${s}${i}`, question: `Question ${i}?`, evidence_type: 'boolean' }))
    const tooMany = await post({
      sections: [
        { id: 'a', title: 'A', questions: many(150, 'a') },
        { id: 'b', title: 'B', questions: many(51, 'b') },
      ],
    })
    expect(tooMany.statusCode).toBe(422)
    expect(tooMany.json().errors).toEqual([
      { field: 'sections', message: '201 questions; a questionnaire has at most 200' },
    ])
    expect(
      (
        await post({
          sections: [
            { id: 'a', title: 'A', questions: many(150, 'a') },
            { id: 'b', title: 'B', questions: many(50, 'b') },
          ],
        })
      ).statusCode,
    ).toBe(201)
    expect((await post({ target: 'robot', sections: sections() })).statusCode).toBe(422)
  })

  it('attaches to use cases and models when the target matches, and shows KEY+version on the use case', async () => {
    await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'MODEL-CARD', name: 'Model card', target: 'model', sections: sections() },
    })
    await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'VENDOR', name: 'Vendor', target: 'vendor', sections: sections() },
    })
    const uc = (await write()({ method: 'POST', url: '/use_cases', payload: { name: 'Questionnaire holder' } })).json()
      .id
    const other = (await write()({ method: 'POST', url: '/use_cases', payload: { name: 'Bystander' } })).json().id

    const attached = await write()({
      method: 'POST',
      url: `/use_cases/${uc}/questionnaires`,
      payload: { key: 'INTAKE', version: 1 },
    })
    expect(attached.statusCode, attached.body).toBe(201)
    expect(attached.headers.location).toBe(`/api/v1/integration/use_cases/${uc}/questionnaires/INTAKE`)
    expect(attached.json()).toMatchObject({
      key: 'INTAKE',
      version: 1,
      questionnaire_id: 'INTAKE+1',
      target: 'use_case',
    })
    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc}/questionnaires`, payload: { key: 'INTAKE' } }))
        .statusCode,
    ).toBe(409)

    const wrongTarget = await write()({
      method: 'POST',
      url: `/use_cases/${uc}/questionnaires`,
      payload: { key: 'MODEL-CARD' },
    })
    expect(wrongTarget.statusCode).toBe(422)
    expect(wrongTarget.json().errors).toEqual([
      { field: 'key', message: 'questionnaire "MODEL-CARD" targets model, not use_case' },
    ])
    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc}/questionnaires`, payload: { key: 'NOPE' } })).statusCode,
    ).toBe(422)
    expect(
      (
        await write()({
          method: 'POST',
          url: `/use_cases/${uc}/questionnaires`,
          payload: { key: 'INTAKE', version: 9 },
        })
      ).json().errors[0].field,
    ).toBe('version')

    expect((await read()({ method: 'GET', url: `/use_cases/${uc}` })).json().questionnaire_ids).toEqual(['INTAKE+1'])
    const list = (await read()({ method: 'GET', url: '/use_cases?page_limit=100' })).json().items
    expect(list.find((u: { id: string }) => u.id === uc).questionnaire_ids).toEqual(['INTAKE+1'])
    expect(list.find((u: { id: string }) => u.id === other).questionnaire_ids).toEqual([])
    const patched = await write()({
      method: 'PATCH',
      url: `/use_cases/${uc}`,
      payload: { description: 'still attached' },
    })
    expect(patched.json().questionnaire_ids).toEqual(['INTAKE+1'])
    expect(
      (await read()({ method: 'GET', url: `/use_cases/${uc}/questionnaires` }))
        .json()
        .items.map((q: { questionnaire_id: string }) => q.questionnaire_id),
    ).toEqual(['INTAKE+1'])
    expect((await read()({ method: 'GET', url: `/use_cases/${uc}/questionnaires/INTAKE` })).statusCode).toBe(200)

    const model = await insertModel('Scoring model')
    expect(
      (await write()({ method: 'POST', url: `/models/${model}/questionnaires`, payload: { key: 'INTAKE' } }))
        .statusCode,
    ).toBe(422)
    expect(
      (await write()({ method: 'POST', url: `/models/${model}/questionnaires`, payload: { key: 'MODEL-CARD' } }))
        .statusCode,
    ).toBe(201)
    expect(
      (await read()({ method: 'GET', url: `/models/${model}/questionnaires` }))
        .json()
        .items.map((q: { key: string }) => q.key),
    ).toEqual(['MODEL-CARD'])
    expect((await t.as('globex', 'admin')({ method: 'GET', url: `/models/${model}/questionnaires` })).statusCode).toBe(
      404,
    )
    expect(
      (
        await t.as(
          'globex',
          'admin',
        )({ method: 'POST', url: `/use_cases/${uc}/questionnaires`, payload: { key: 'INTAKE' } })
      ).statusCode,
    ).toBe(404)
    expect((await write()({ method: 'DELETE', url: `/models/${model}/questionnaires/MODEL-CARD` })).statusCode).toBe(
      204,
    )
    expect((await read()({ method: 'GET', url: `/models/${model}/questionnaires` })).json().items).toEqual([])
    expect(await auditActions(t, tenant, `resource_id=${model}`)).toEqual([
      'questionnaire.attached',
      'questionnaire.detached',
    ])

    expect((await write()({ method: 'DELETE', url: `/use_cases/${uc}/questionnaires/INTAKE` })).statusCode).toBe(204)
    expect((await write()({ method: 'DELETE', url: `/use_cases/${uc}/questionnaires/INTAKE` })).statusCode).toBe(404)
    expect((await read()({ method: 'GET', url: `/use_cases/${uc}` })).json().questionnaire_ids).toEqual([])
    expect(await auditActions(t, tenant, `use_case_id=${uc}&resource_type=use_case`)).toEqual([
      'use_case.created',
      'questionnaire.attached',
      'use_case.updated',
      'questionnaire.detached',
    ])
  })

  it('deletes use cases and models that have questionnaires attached', async () => {
    const uc = (await write()({ method: 'POST', url: '/use_cases', payload: { name: 'Short-lived' } })).json().id
    await write()({ method: 'POST', url: `/use_cases/${uc}/questionnaires`, payload: { key: 'INTAKE' } })
    expect((await write()({ method: 'DELETE', url: `/use_cases/${uc}` })).statusCode).toBe(204)
    const model = await insertModel('Short-lived model')
    await write()({ method: 'POST', url: `/models/${model}/questionnaires`, payload: { key: 'MODEL-CARD' } })
    await t.deps.database.db.deleteFrom('models').where('id', '=', model).execute()
    expect(
      await t.deps.database.db.selectFrom('model_questionnaires').selectAll().where('model_id', '=', model).execute(),
    ).toEqual([])
  })
})
