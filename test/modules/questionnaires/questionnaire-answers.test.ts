import { afterAll, beforeAll, expect, it } from 'vitest'
import { INTAKE_SECTIONS } from '../../helpers/governance.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

describeEachDialect('questionnaire answers', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
    for (const [key, target] of [
      ['INTAKE', 'use_case'],
      ['VENDOR-DD', 'vendor'],
    ]) {
      const res = await t.as(
        'acme',
        'write',
      )({ method: 'POST', url: '/questionnaires', payload: { key, name: key, target, sections: INTAKE_SECTIONS } })
      expect(res.statusCode, res.body).toBe(201)
    }
  })
  afterAll(async () => t?.close())
  const write = () => t.as('acme', 'write')
  const read = () => t.as('acme', 'read')

  const useCase = async (name: string) => {
    const uc = (await write()({ method: 'POST', url: '/use_cases', payload: { name } })).json()
    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc.id}/questionnaires`, payload: { key: 'INTAKE' } }))
        .statusCode,
    ).toBe(201)
    return uc.id as string
  }
  const link = async (tenant = 'acme') =>
    (
      await t.as(
        tenant,
        'write',
      )({
        method: 'POST',
        url: '/evidence',
        payload: { kind: 'link', url: 'https://dpia.example.com/1', title: 'DPIA' },
      })
    ).json().id as string

  it('answers every question type, reports progress, and writes one audit record per PUT with the changes', async () => {
    const id = await useCase('Answers: all types')
    const empty = (await read()({ method: 'GET', url: `/use_cases/${id}/questionnaires/INTAKE` })).json()
    expect(empty).toMatchObject({
      key: 'INTAKE',
      version: 1,
      answers: [],
      progress: { questions: 6, answered: 0, required: 3, required_answered: 0, complete: false },
    })

    const dpia = await link()
    const put = await write()({
      method: 'PUT',
      url: `/use_cases/${id}/questionnaires/INTAKE/answers`,
      payload: {
        answers: [
          { question_id: 'decision', value: 'Ranks loan applications' },
          { question_id: 'users', value: 1200 },
          { question_id: 'personal_data', value: true },
          { question_id: 'regions', value: ['EU', 'US'] },
          { question_id: 'dpia', value: [dpia] },
        ],
      },
    })
    expect(put.statusCode, put.body).toBe(200)
    const body = put.json()
    expect(body.progress).toEqual({ questions: 6, answered: 5, required: 3, required_answered: 2, complete: false })
    expect(body.answers.map((a: { question_id: string }) => a.question_id)).toEqual([
      'decision',
      'users',
      'personal_data',
      'regions',
      'dpia',
    ])
    expect(body.answers[4]).toMatchObject({ section_id: 'oversight', value: [dpia], evidence_ids: [dpia] })
    expect(body.answers[0].answered_by).toMatch(/^key_/)

    const second = await write()({
      method: 'PUT',
      url: `/use_cases/${id}/questionnaires/INTAKE/answers`,
      payload: {
        answers: [
          { question_id: 'autonomy', value: 'human-in-the-loop' },
          { question_id: 'users', value: null },
        ],
      },
    })
    expect(second.json().progress).toMatchObject({ answered: 5, required_answered: 3, complete: true })
    expect((await read()({ method: 'GET', url: `/use_cases/${id}/questionnaires/INTAKE` })).json()).toEqual(
      second.json(),
    )

    const audit = (
      await read()({ method: 'GET', url: `/audit_logs?use_case_id=${id}&action=questionnaire.answered` })
    ).json().items
    expect(audit).toHaveLength(2)
    const changes = audit.find((a: { changes: Record<string, unknown> }) => 'autonomy' in a.changes).changes
    expect(changes).toEqual({
      autonomy: [null, { value: 'human-in-the-loop', evidence_ids: [] }],
      users: [{ value: 1200, evidence_ids: [] }, null],
    })

    // The same answers again change nothing and write no audit record.
    await write()({
      method: 'PUT',
      url: `/use_cases/${id}/questionnaires/INTAKE/answers`,
      payload: { answers: [{ question_id: 'autonomy', value: 'human-in-the-loop' }] },
    })
    expect(
      (await read()({ method: 'GET', url: `/audit_logs?use_case_id=${id}&action=questionnaire.answered` })).json()
        .items,
    ).toHaveLength(2)

    // Evidence named by an answer cannot be deleted while the answer stands.
    const del = await write()({ method: 'DELETE', url: `/evidence/${dpia}` })
    expect(del.statusCode).toBe(409)
    expect(
      (await read()({ method: 'GET', url: `/evidence?use_case_id=${id}` }))
        .json()
        .items.map((e: { id: string }) => e.id),
    ).toEqual([dpia])
    await write()({
      method: 'PUT',
      url: `/use_cases/${id}/questionnaires/INTAKE/answers`,
      payload: { answers: [{ question_id: 'dpia', value: null }] },
    })
    expect((await write()({ method: 'DELETE', url: `/evidence/${dpia}` })).statusCode).toBe(204)
  })

  it('refuses values that do not fit the question, unknown questions and foreign evidence, naming each member; nothing is written', async () => {
    const id = await useCase('Answers: bad input')
    const foreign = await link('globex')
    const put = (answers: unknown[]) =>
      write()({ method: 'PUT', url: `/use_cases/${id}/questionnaires/INTAKE/answers`, payload: { answers } })
    const res = await put([
      { question_id: 'decision', value: 42 },
      { question_id: 'users', value: 'many' },
      { question_id: 'personal_data', value: 'yes' },
      { question_id: 'autonomy', value: 'sometimes' },
      { question_id: 'regions', value: 'EU' },
      { question_id: 'dpia', value: [foreign] },
      { question_id: 'nope', value: 'x' },
      { question_id: 'decision', value: 'twice' },
    ])
    expect(res.statusCode).toBe(422)
    expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual([
      'answers/0/value',
      'answers/1/value',
      'answers/2/value',
      'answers/3/value',
      'answers/4/value',
      'answers/6/question_id',
      'answers/7/question_id',
      'answers/5/value/0',
    ])
    expect(
      (await put([{ question_id: 'decision', value: 'ok', evidence_ids: ['ev_00000000000000000000000000'] }])).json()
        .errors,
    ).toEqual([{ field: 'answers/0/evidence_ids/0', message: 'evidence ev_00000000000000000000000000 was not found' }])
    expect((await put([{ question_id: 'decision', value: 'ok', extra: 1 }])).json().errors).toContainEqual({
      field: 'answers/0/extra',
      message: 'unknown field',
    })
    expect((await put([])).statusCode).toBe(422)
    expect((await read()({ method: 'GET', url: `/use_cases/${id}/questionnaires/INTAKE` })).json().answers).toEqual([])
    expect(
      (await read()({ method: 'GET', url: `/audit_logs?use_case_id=${id}&action=questionnaire.answered` })).json()
        .items,
    ).toEqual([])
    expect(
      (
        await t.as(
          'acme',
          'read',
        )({
          method: 'PUT',
          url: `/use_cases/${id}/questionnaires/INTAKE/answers`,
          payload: { answers: [{ question_id: 'decision', value: 'x' }] },
        })
      ).statusCode,
    ).toBe(403)
    expect(
      (
        await t.as(
          'globex',
          'admin',
        )({
          method: 'PUT',
          url: `/use_cases/${id}/questionnaires/INTAKE/answers`,
          payload: { answers: [{ question_id: 'decision', value: 'x' }] },
        })
      ).statusCode,
    ).toBe(404)
    expect((await put([{ question_id: 'decision', value: 'x' }])).statusCode).toBe(200)
    expect(
      (
        await write()({
          method: 'PUT',
          url: `/use_cases/${id}/questionnaires/OTHER/answers`,
          payload: { answers: [{ question_id: 'decision', value: 'x' }] },
        })
      ).statusCode,
    ).toBe(404)
  })

  it('attaches questionnaires to vendors and answers them; detaching drops the answers', async () => {
    const vendor = (await write()({ method: 'POST', url: '/vendors', payload: { name: 'Answers Vendor' } })).json()
    const wrongTarget = await write()({
      method: 'POST',
      url: `/vendors/${vendor.id}/questionnaires`,
      payload: { key: 'INTAKE' },
    })
    expect(wrongTarget.statusCode).toBe(422)
    const attach = await write()({
      method: 'POST',
      url: `/vendors/${vendor.id}/questionnaires`,
      payload: { key: 'VENDOR-DD' },
    })
    expect(attach.statusCode, attach.body).toBe(201)
    expect(
      (await read()({ method: 'GET', url: `/vendors/${vendor.id}/questionnaires` }))
        .json()
        .items.map((q: { key: string }) => q.key),
    ).toEqual(['VENDOR-DD'])
    const put = await write()({
      method: 'PUT',
      url: `/vendors/${vendor.id}/questionnaires/VENDOR-DD/answers`,
      payload: { answers: [{ question_id: 'decision', value: 'Hosting' }] },
    })
    expect(put.json().progress.answered).toBe(1)
    // The list carries each attachment's progress, as its own read does (and no questions or answers).
    const [listed] = (await read()({ method: 'GET', url: `/vendors/${vendor.id}/questionnaires` })).json().items
    const got = (await read()({ method: 'GET', url: `/vendors/${vendor.id}/questionnaires/VENDOR-DD` })).json()
    expect(listed.progress).toEqual(got.progress)
    expect(listed.progress).toMatchObject({ answered: 1, complete: got.progress.complete })
    expect(listed).not.toHaveProperty('answers')
    expect(listed).not.toHaveProperty('sections')
    expect(
      (await write()({ method: 'DELETE', url: `/vendors/${vendor.id}/questionnaires/VENDOR-DD` })).statusCode,
    ).toBe(204)
    await write()({ method: 'POST', url: `/vendors/${vendor.id}/questionnaires`, payload: { key: 'VENDOR-DD' } })
    expect(
      (await read()({ method: 'GET', url: `/vendors/${vendor.id}/questionnaires/VENDOR-DD` })).json().answers,
    ).toEqual([])
  })
})
