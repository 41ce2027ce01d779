// The calls the integrations built on the original interface's Python SDK make (cloud inventory syncs for AWS
// Bedrock, Azure AI Foundry, Microsoft Agent 365, and a spreadsheet migration), with the bodies their code sends.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

const INTAKE = {
  key: 'AI-USE-CASE-INTAKE',
  name: 'AI use case intake',
  target: 'use_case',
  sections: [
    {
      id: 'purpose',
      title: 'Purpose',
      questions: [{ id: 'what', question: 'What does the system decide?', evidence_type: 'text', required: true }],
    },
  ],
}

/** The Azure sync's template: sections and questions without ids. */
const AZURE_TEMPLATE = {
  key: 'AZURE-AI-FOUNDRY',
  name: 'Azure AI Foundry deployment review',
  target: 'model',
  sections: [
    {
      title: 'Deployment',
      description: 'Where and how the model is deployed.',
      questions: [
        {
          question: 'Which Azure region hosts the deployment?',
          evidence_type: 'select',
          select_options: ['westeurope', 'eastus', 'other'],
        },
        { question: 'Is content filtering enabled?', evidence_type: 'boolean', required: true },
      ],
    },
    {
      title: 'Data',
      questions: [{ question: 'Does the deployment process personal data?', evidence_type: 'boolean' }],
    },
  ],
}

describeEachDialect('original SDK integrations: questionnaires addressed as KEY+version', (dialect) => {
  let t: TestApp
  let useCase: string
  beforeAll(async () => {
    t = await startTestApp(dialect)
    for (const name of ['v1', 'v2']) {
      const res = await write()({
        method: 'POST',
        url: '/questionnaires',
        payload: { ...INTAKE, name: `${INTAKE.name} ${name}` },
      })
      expect(res.statusCode, res.body).toBe(201)
    }
    useCase = (await write()({ method: 'POST', url: '/use_cases', payload: { name: 'Bedrock agent' } })).json().id
  })
  afterAll(async () => t?.close())
  const write = () => t.as('acme', 'write')
  const read = () => t.as('acme', 'read')

  it('GET /questionnaires/KEY+1 (and %2B) answers what ?version=1 answers', async () => {
    const plain = await read()({ method: 'GET', url: '/questionnaires/AI-USE-CASE-INTAKE?version=1' })
    expect(plain.statusCode).toBe(200)
    for (const url of [
      '/questionnaires/AI-USE-CASE-INTAKE+1',
      '/questionnaires/AI-USE-CASE-INTAKE%2B1',
      '/questionnaires/AI-USE-CASE-INTAKE%2b1',
    ]) {
      const res = await read()({ method: 'GET', url })
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200)
      expect(res.json()).toEqual(plain.json())
    }
    expect((await read()({ method: 'GET', url: '/questionnaires/AI-USE-CASE-INTAKE+2' })).json()).toMatchObject({
      version: 2,
      latest: true,
    })
    // The same version twice is no contradiction; two different ones are.
    expect((await read()({ method: 'GET', url: '/questionnaires/AI-USE-CASE-INTAKE+1?version=1' })).statusCode).toBe(
      200,
    )
    const both = await read()({ method: 'GET', url: '/questionnaires/AI-USE-CASE-INTAKE+1?version=2' })
    expect(both.statusCode).toBe(400)
    expect(both.json().errors).toEqual([{ field: 'version', message: expect.stringContaining('names version 1') }])
  })

  it('refuses the malformed forms as the plain ones would: 404 on a path, 422 in a body', async () => {
    for (const ref of [
      'AI-USE-CASE-INTAKE+x',
      'AI-USE-CASE-INTAKE+0',
      'AI-USE-CASE-INTAKE+',
      'AI-USE-CASE-INTAKE+3',
      'NOPE+1',
      '+1',
      'AI-USE-CASE-INTAKE+1+1',
    ]) {
      const res = await read()({ method: 'GET', url: `/questionnaires/${encodeURIComponent(ref)}` })
      expect(res.statusCode, ref).toBe(404)
      expect(res.json().code).toBe('not_found')
    }
    for (const key of [
      'AI-USE-CASE-INTAKE+x',
      'AI-USE-CASE-INTAKE+0',
      'AI-USE-CASE-INTAKE+',
      '+1',
      'AI-USE-CASE-INTAKE+1+1',
    ]) {
      const res = await write()({ method: 'POST', url: `/use_cases/${useCase}/questionnaires`, payload: { key } })
      expect(res.statusCode, key).toBe(422)
      expect(res.json().errors[0].field).toBe('key')
    }
    const missing = await write()({
      method: 'POST',
      url: `/use_cases/${useCase}/questionnaires`,
      payload: { key: 'AI-USE-CASE-INTAKE+3' },
    })
    expect(missing.statusCode).toBe(422)
    expect(missing.json().errors).toEqual([
      { field: 'key', message: 'no questionnaire "AI-USE-CASE-INTAKE+3" in this tenant' },
    ])
    const contradiction = await write()({
      method: 'POST',
      url: `/use_cases/${useCase}/questionnaires`,
      payload: { key: 'AI-USE-CASE-INTAKE+1', version: 2 },
    })
    expect(contradiction.statusCode).toBe(422)
    expect(contradiction.json().errors[0].field).toBe('version')
    expect((await read()({ method: 'GET', url: `/use_cases/${useCase}/questionnaires` })).json().items).toEqual([])
  })

  it('refuses a key containing "+" at creation, so KEY+version is unambiguous', async () => {
    const res = await write()({ method: 'POST', url: '/questionnaires', payload: { ...INTAKE, key: 'A+B' } })
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].field).toBe('key')
  })

  it('attach {"key": "KEY+1"} equals {"key": "KEY", "version": 1}; answers and detach take KEY+1 too', async () => {
    const other = (
      await write()({ method: 'POST', url: '/use_cases', payload: { name: 'Bedrock agent, plain form' } })
    ).json().id
    const byRef = await write()({
      method: 'POST',
      url: `/use_cases/${useCase}/questionnaires`,
      payload: { key: 'AI-USE-CASE-INTAKE+1' },
    })
    const plain = await write()({
      method: 'POST',
      url: `/use_cases/${other}/questionnaires`,
      payload: { key: 'AI-USE-CASE-INTAKE', version: 1 },
    })
    expect(byRef.statusCode, byRef.body).toBe(201)
    const { attached_at: _a, ...refBody } = byRef.json()
    const { attached_at: _b, ...plainBody } = plain.json()
    expect(refBody).toEqual(plainBody)
    expect(refBody).toMatchObject({ key: 'AI-USE-CASE-INTAKE', version: 1, questionnaire_id: 'AI-USE-CASE-INTAKE+1' })
    expect(byRef.headers.location).toBe(`/api/v1/integration/use_cases/${useCase}/questionnaires/AI-USE-CASE-INTAKE`)
    expect((await read()({ method: 'GET', url: `/use_cases/${useCase}` })).json().questionnaire_ids).toEqual([
      'AI-USE-CASE-INTAKE+1',
    ])

    const answered = await write()({
      method: 'PUT',
      url: `/use_cases/${useCase}/questionnaires/AI-USE-CASE-INTAKE+1/answers`,
      payload: { answers: [{ question_id: 'what', value: 'Routes support tickets.' }] },
    })
    expect(answered.statusCode, answered.body).toBe(200)
    expect(answered.json().progress).toMatchObject({ answered: 1, complete: true })
    for (const url of [
      `/use_cases/${useCase}/questionnaires/AI-USE-CASE-INTAKE%2B1`,
      `/use_cases/${useCase}/questionnaires/AI-USE-CASE-INTAKE`,
    ]) {
      expect((await read()({ method: 'GET', url })).json().answers).toEqual([
        expect.objectContaining({ question_id: 'what', value: 'Routes support tickets.' }),
      ])
    }
    // A version other than the attached one, or a malformed ref, names no attachment.
    for (const ref of ['AI-USE-CASE-INTAKE+2', 'AI-USE-CASE-INTAKE+0', 'AI-USE-CASE-INTAKE+x']) {
      expect(
        (await read()({ method: 'GET', url: `/use_cases/${useCase}/questionnaires/${encodeURIComponent(ref)}` }))
          .statusCode,
        ref,
      ).toBe(404)
      expect(
        (
          await write()({
            method: 'PUT',
            url: `/use_cases/${useCase}/questionnaires/${encodeURIComponent(ref)}/answers`,
            payload: { answers: [{ question_id: 'what', value: 'x' }] },
          })
        ).statusCode,
        ref,
      ).toBe(404)
      expect(
        (await write()({ method: 'DELETE', url: `/use_cases/${useCase}/questionnaires/${encodeURIComponent(ref)}` }))
          .statusCode,
        ref,
      ).toBe(404)
    }
    const wrong = await read()({ method: 'GET', url: `/use_cases/${useCase}/questionnaires/AI-USE-CASE-INTAKE+2` })
    expect(wrong.json().detail).toContain('version 1 of "AI-USE-CASE-INTAKE" is attached')

    const detached = await write()({
      method: 'DELETE',
      url: `/use_cases/${useCase}/questionnaires/AI-USE-CASE-INTAKE+1`,
    })
    expect(detached.statusCode, detached.body).toBe(204)
    expect((await read()({ method: 'GET', url: `/use_cases/${useCase}/questionnaires` })).json().items).toEqual([])
    const audit = (await read()({ method: 'GET', url: `/audit_logs?use_case_id=${useCase}&sort=created_at` }))
      .json()
      .items.map((a: { action: string; sub_object_name: string }) => [a.action, a.sub_object_name])
    expect(audit).toContainEqual(['questionnaire.detached', 'AI-USE-CASE-INTAKE+1'])
  })

  it('models and vendors take KEY+version the same way', async () => {
    const model = (
      await write()({ method: 'POST', url: '/models', payload: { name: 'Foundry GPT deployment' } })
    ).json().id
    await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: { ...INTAKE, key: 'MODEL-CARD', target: 'model' },
    })
    expect(
      (await write()({ method: 'POST', url: `/models/${model}/questionnaires`, payload: { key: 'MODEL-CARD+1' } }))
        .statusCode,
    ).toBe(201)
    expect((await read()({ method: 'GET', url: `/models/${model}/questionnaires/MODEL-CARD+1` })).json()).toMatchObject(
      { key: 'MODEL-CARD', version: 1 },
    )
    expect(
      (await write()({ method: 'DELETE', url: `/models/${model}/questionnaires/MODEL-CARD%2B1` })).statusCode,
    ).toBe(204)
  })
})

describeEachDialect('original SDK integrations: questionnaires without section and question ids', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())
  const write = () => t.as('acme', 'write')

  it('assigns readable ids to the sections and questions the template leaves without, returns them, and keeps them on a re-sent template', async () => {
    const res = await write()({ method: 'POST', url: '/questionnaires', payload: AZURE_TEMPLATE })
    expect(res.statusCode, res.body).toBe(201)
    const ids = (q: { sections: { id: string; questions: { id: string }[] }[] }) =>
      q.sections.map((s) => [s.id, s.questions.map((x) => x.id)])
    expect(ids(res.json())).toEqual([
      ['deployment', ['which-azure-region-hosts-the-deployment', 'is-content-filtering-enabled']],
      ['data', ['does-the-deployment-process-personal-data']],
    ])
    const stored = await t.as('acme', 'read')({ method: 'GET', url: '/questionnaires/AZURE-AI-FOUNDRY+1' })
    expect(ids(stored.json())).toEqual(ids(res.json()))
    // The sync creates the next version from the same template: the same ids, so answers stay addressable.
    const next = await write()({ method: 'POST', url: '/questionnaires', payload: AZURE_TEMPLATE })
    expect(next.json().version).toBe(2)
    expect(ids(next.json())).toEqual(ids(res.json()))
    // Answers address the assigned ids.
    const model = (await write()({ method: 'POST', url: '/models', payload: { name: 'Foundry deployment' } })).json().id
    await write()({ method: 'POST', url: `/models/${model}/questionnaires`, payload: { key: 'AZURE-AI-FOUNDRY+2' } })
    const answered = await write()({
      method: 'PUT',
      url: `/models/${model}/questionnaires/AZURE-AI-FOUNDRY+2/answers`,
      payload: { answers: [{ question_id: 'is-content-filtering-enabled', value: true }] },
    })
    expect(answered.statusCode, answered.body).toBe(200)
    expect(answered.json().answers[0]).toMatchObject({
      section_id: 'deployment',
      question_id: 'is-content-filtering-enabled',
      value: true,
    })
  })

  it('keeps the ids given, assigns around them, and never assigns one twice (200 questions of the same text)', async () => {
    const questions = Array.from({ length: 200 }, (_, i) => ({
      ...(i === 5 ? { id: 'is-it-used-2' } : {}),
      question: 'Is it used?',
      evidence_type: 'boolean',
    }))
    const res = await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: {
        key: 'SAME-TEXT',
        name: 'Same text',
        target: 'use_case',
        sections: [
          { title: 'Usage', questions: questions.slice(0, 100) },
          { id: 'usage', title: 'More', questions: questions.slice(100) },
        ],
      },
    })
    expect(res.statusCode, res.body).toBe(201)
    const sections = res.json().sections as { id: string; questions: { id: string }[] }[]
    expect(sections.map((s) => s.id)).toEqual(['usage-2', 'usage'])
    const questionIds = sections.flatMap((s) => s.questions.map((q) => q.id))
    expect(questionIds).toHaveLength(200)
    expect(new Set(questionIds).size).toBe(200)
    expect(questionIds.slice(0, 7)).toEqual([
      'is-it-used',
      'is-it-used-3',
      'is-it-used-4',
      'is-it-used-5',
      'is-it-used-6',
      'is-it-used-2',
      'is-it-used-7',
    ])
    for (const id of questionIds) expect(id).toMatch(/^[a-z0-9][a-z0-9-]*$/)
  })

  it('falls back to the position for text without Latin letters or digits, cuts long text at a word, and still refuses duplicate given ids', async () => {
    const long =
      'How does the organisation make sure that the people affected by automated decisions are told about them?'
    const res = await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: {
        key: 'FALLBACK',
        name: 'Fallback',
        target: 'use_case',
        sections: [
          {
            title: '目的',
            questions: [
              { question: '何を決めますか?', evidence_type: 'text' },
              { question: long, evidence_type: 'text' },
              { question: 'Ça décide?', evidence_type: 'text' },
            ],
          },
        ],
      },
    })
    expect(res.statusCode, res.body).toBe(201)
    const [section] = res.json().sections
    expect(section.id).toBe('section-1')
    expect(section.questions.map((q: { id: string }) => q.id)).toEqual([
      'q-1',
      'how-does-the-organisation-make-sure-that-the',
      'ca-decide',
    ])
    const dup = await write()({
      method: 'POST',
      url: '/questionnaires',
      payload: {
        key: 'DUP',
        name: 'Dup',
        target: 'use_case',
        sections: [
          {
            title: 'A',
            questions: [
              { id: 'x', question: 'A?', evidence_type: 'text' },
              { id: 'x', question: 'B?', evidence_type: 'text' },
            ],
          },
        ],
      },
    })
    expect(dup.statusCode).toBe(422)
    expect(dup.json().errors).toEqual([
      { field: 'sections/0/questions/1/id', message: 'question id "x" is used twice in this questionnaire' },
    ])
  })
})

describeEachDialect('original SDK integrations: custom field definitions', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())
  const admin = () => t.as('acme', 'admin')

  it('accepts metadata and entity_type_ids as the SDK sends them, and keeps and returns the metadata', async () => {
    const body = {
      name: 'Azure resource id',
      type: 'string',
      element_type: 'input',
      metadata: { description: 'The ARM id the sync matches on.', source: 'azure-ai-foundry', order: 3 },
      entity_type_ids: ['model'],
    }
    const res = await admin()({ method: 'POST', url: '/custom_fields', payload: body })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({
      name: 'Azure resource id',
      description: 'The ARM id the sync matches on.',
      entity_types: ['model'],
      metadata: body.metadata,
    })
    const got = await t.as('acme', 'read')({ method: 'GET', url: `/custom_fields/${res.json().id}` })
    expect(got.json()).toEqual(res.json())
    // A description given wins over the one in metadata.
    const own = await admin()({
      method: 'POST',
      url: '/custom_fields',
      payload: { name: 'Bedrock model arn', description: 'Mine', metadata: { description: 'Theirs' } },
    })
    expect(own.json()).toMatchObject({ description: 'Mine', metadata: { description: 'Theirs' } })
    // Updates: metadata replaced, its description fills description when the body has none; null clears metadata.
    const patched = await admin()({
      method: 'PATCH',
      url: `/custom_fields/${res.json().id}`,
      payload: { metadata: { description: 'Now this.' }, entity_type_ids: ['model', 'use_case'] },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    expect(patched.json()).toMatchObject({
      description: 'Now this.',
      metadata: { description: 'Now this.' },
      entity_types: ['model', 'use_case'],
    })
    const cleared = await admin()({
      method: 'PATCH',
      url: `/custom_fields/${res.json().id}`,
      payload: { metadata: null },
    })
    expect(cleared.json()).toMatchObject({ description: 'Now this.', metadata: null })
    const audit = (
      await admin()({ method: 'GET', url: `/audit_logs?resource_id=${res.json().id}&sort=created_at` })
    ).json().items
    expect(audit.map((a: { action: string }) => a.action)).toEqual([
      'custom_field.created',
      'custom_field.updated',
      'custom_field.updated',
    ])
    expect(audit[0].changes.metadata).toEqual([null, body.metadata])
  })

  it('refuses metadata that is not an object or larger than 16 KB, disagreeing entity type names, and unknown fields, creating nothing', async () => {
    const refused = async (payload: object, field: string) => {
      const res = await admin()({
        method: 'POST',
        url: '/custom_fields',
        payload: { name: `Refused ${field} ${Math.random()}`, ...payload },
      })
      expect(res.statusCode, res.body).toBe(422)
      expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field)
    }
    for (const metadata of ['a string', 12, true, ['a', 'list']]) await refused({ metadata }, 'metadata')
    await refused({ metadata: { blob: 'x'.repeat(16 * 1024) } }, 'metadata')
    await refused({ entity_types: ['model'], entity_type_ids: ['vendor'] }, 'entity_type_ids')
    await refused({ entity_type_ids: ['workspace'] }, 'entity_type_ids/0')
    await refused({ metadata: {}, entity_type_ids: [], label: 'x' }, 'label')
    expect((await admin()({ method: 'GET', url: '/custom_fields?q=Refused' })).json().items).toEqual([])
    // 16 KB exactly is within the bound.
    const fits = await admin()({
      method: 'POST',
      url: '/custom_fields',
      payload: { name: 'Fits', metadata: { b: 'x'.repeat(16 * 1024 - 8) } },
    })
    expect(fits.statusCode, fits.body).toBe(201)
  })

  it('is an admin action: a write key can no longer make every create of the tenant fail with a required field', async () => {
    const required = { name: 'Cost centre', required: true }
    for (const role of ['read', 'write'] as const) {
      const res = await t.as('acme', role)({ method: 'POST', url: '/custom_fields', payload: required })
      expect(res.statusCode).toBe(403)
      expect(res.json()).toMatchObject({ code: 'forbidden', role, required_role: 'admin' })
    }
    expect(
      (await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'Still creatable' } }))
        .statusCode,
    ).toBe(201)
    const field = (await admin()({ method: 'POST', url: '/custom_fields', payload: { name: 'Optional tag' } })).json()
    for (const role of ['read', 'write'] as const) {
      expect(
        (await t.as('acme', role)({ method: 'PATCH', url: `/custom_fields/${field.id}`, payload: { required: true } }))
          .statusCode,
      ).toBe(403)
      expect((await t.as('acme', role)({ method: 'DELETE', url: `/custom_fields/${field.id}` })).statusCode).toBe(403)
      // Reading stays open to every role.
      expect((await t.as('acme', role)({ method: 'GET', url: `/custom_fields/${field.id}` })).statusCode).toBe(200)
      expect(
        (await t.as('acme', role)({ method: 'GET', url: '/custom_fields?q=Optional%20tag' })).json().items,
      ).toHaveLength(1)
    }
    expect((await admin()({ method: 'GET', url: `/custom_fields/${field.id}` })).json().required).toBe(false)
    expect((await admin()({ method: 'DELETE', url: `/custom_fields/${field.id}` })).statusCode).toBe(204)
  })
})

describeEachDialect('original SDK integrations: a cursor keeps its sort', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
    for (const name of ['delta', 'alpha', 'echo', 'charlie', 'bravo'])
      await t.as('acme', 'write')({ method: 'POST', url: '/vendors', payload: { name } })
  })
  afterAll(async () => t?.close())
  const read = () => t.as('acme', 'read')
  const names = (res: { json(): { items: { name: string }[] } }) => res.json().items.map((v) => v.name)

  it("page_after without sort continues in the cursor's sort; another explicit sort stays a 400", async () => {
    const first = await read()({ method: 'GET', url: '/vendors?sort=-name&page_limit=2' })
    expect(names(first)).toEqual(['echo', 'delta'])
    const cursor = first.json().pagination.next_cursor
    const next = await read()({ method: 'GET', url: `/vendors?page_after=${cursor}&page_limit=2` })
    expect(next.statusCode, next.body).toBe(200)
    expect(names(next)).toEqual(['charlie', 'bravo'])
    const last = await read()({
      method: 'GET',
      url: `/vendors?page_after=${next.json().pagination.next_cursor}&page_limit=2`,
    })
    expect(names(last)).toEqual(['alpha'])
    expect(last.json().pagination).toEqual({ has_more: false, next_cursor: null })
    // The same sort repeated is fine; a different one is refused.
    expect(
      names(await read()({ method: 'GET', url: `/vendors?sort=-name&page_after=${cursor}&page_limit=2` })),
    ).toEqual(['charlie', 'bravo'])
    const other = await read()({ method: 'GET', url: `/vendors?sort=name&page_after=${cursor}` })
    expect(other.statusCode).toBe(400)
    expect(other.json().errors).toEqual([
      { field: 'page_after', message: expect.stringContaining('the cursor was made for sort "-name", not "name"') },
    ])
  })

  it('holds for every collection the shared helper serves (questionnaires, workflow stages by position, audit logs)', async () => {
    for (const key of ['B-KEY', 'A-KEY', 'C-KEY']) {
      await t.as('acme', 'write')({ method: 'POST', url: '/questionnaires', payload: { ...INTAKE, key } })
    }
    const first = await read()({ method: 'GET', url: '/questionnaires?sort=key&page_limit=1' })
    const next = await read()({
      method: 'GET',
      url: `/questionnaires?page_after=${first.json().pagination.next_cursor}&page_limit=5`,
    })
    expect(next.json().items.map((q: { key: string }) => q.key)).toEqual(['B-KEY', 'C-KEY'])

    const stages = await read()({ method: 'GET', url: '/workflow_stages?page_limit=1' })
    const restStages = await read()({
      method: 'GET',
      url: `/workflow_stages?page_after=${stages.json().pagination.next_cursor}`,
    })
    expect(restStages.statusCode, restStages.body).toBe(200)
    const all = (await read()({ method: 'GET', url: '/workflow_stages' })).json().items.map((s: { id: string }) => s.id)
    expect([...stages.json().items, ...restStages.json().items].map((s: { id: string }) => s.id)).toEqual(all)

    const audit = await read()({ method: 'GET', url: '/audit_logs?sort=-created_at&page_limit=2' })
    const moreAudit = await read()({
      method: 'GET',
      url: `/audit_logs?page_after=${audit.json().pagination.next_cursor}&page_limit=2`,
    })
    expect(moreAudit.statusCode, moreAudit.body).toBe(200)
    const newestFirst = (await read()({ method: 'GET', url: '/audit_logs?sort=-created_at&page_limit=4' }))
      .json()
      .items.map((a: { id: string }) => a.id)
    expect([...audit.json().items, ...moreAudit.json().items].map((a: { id: string }) => a.id)).toEqual(newestFirst)
  })

  it('still refuses a cursor that does not decode, or one whose sort the list does not have', async () => {
    expect((await read()({ method: 'GET', url: '/vendors?page_after=not-a-cursor' })).statusCode).toBe(400)
    const forged = Buffer.from(JSON.stringify(['-owner_secret', 'x', 'vnd_x'])).toString('base64url')
    const res = await read()({ method: 'GET', url: `/vendors?page_after=${forged}` })
    expect(res.statusCode).toBe(400)
    expect(res.json().errors).toEqual([{ field: 'page_after', message: 'not a cursor of this list' }])
  })
})
