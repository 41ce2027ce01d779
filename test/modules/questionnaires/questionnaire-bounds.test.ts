import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
const ANSWERS_MAX_CHARS = 1_000_000,
  ATTACHMENTS_PER_RECORD = 20,
  DOSSIER_QUESTIONNAIRES_CHARS = 8_000_000

// Questions enough that answers of 20 000 characters (the most one text answer holds) pass the attachment's bound.
const QUESTIONS = 60
const SECTIONS = [
  {
    id: 's',
    title: 'Long answers',
    questions: Array.from({ length: QUESTIONS }, (_, i) => ({
      id: `q${i}`,
      question: `Question ${i}`,
      evidence_type: 'text',
    })),
  },
]
const answers = (from: number, count: number) => ({
  answers: Array.from({ length: count }, (_, i) => ({
    question_id: `q${from + i}`,
    value: `${from + i}`.padEnd(20_000, 'x'),
  })),
})

describeEachDialect('questionnaire bounds', (dialect) => {
  let t: TestApp
  const admin = () => t.as('acme', 'admin')
  const read = () => t.as('acme', 'read')
  const questionnaire = async (key: string) =>
    expect(
      (
        await admin()({
          method: 'POST',
          url: '/questionnaires',
          payload: { key, name: key, target: 'use_case', sections: SECTIONS },
        })
      ).statusCode,
    ).toBe(201)
  const useCase = async (name: string, extra: Record<string, unknown> = {}) =>
    admin()({ method: 'POST', url: '/use_cases', payload: { name, ...extra } })
  const count = async (url: string) => (await read()({ method: 'GET', url })).json().items.length as number

  beforeAll(async () => {
    t = await startTestApp(dialect)
    for (let i = 0; i <= ATTACHMENTS_PER_RECORD; i++) await questionnaire(`LONG-${i}`)
  })
  afterAll(async () => t?.close())

  it(`keeps at most ${ANSWERS_MAX_CHARS} characters of answers per attachment, refusing the write past it and keeping what was there`, async () => {
    const uc = (await useCase('Long answers', { questionnaire_ids: ['LONG-0+1'] })).json().id
    const url = `/use_cases/${uc}/questionnaires/LONG-0`
    expect((await admin()({ method: 'PUT', url: `${url}/answers`, payload: answers(0, 45) })).statusCode).toBe(200)
    const audited = await count(`/audit_logs?use_case_id=${uc}&action=questionnaire.answered`)
    const past = await admin()({ method: 'PUT', url: `${url}/answers`, payload: answers(45, 10) })
    expect(past.statusCode, past.body.slice(0, 300)).toBe(413)
    expect(past.json()).toMatchObject({ code: 'payload_too_large' })
    expect(past.json().detail).toContain(String(ANSWERS_MAX_CHARS))
    expect((await read()({ method: 'GET', url })).json().answers).toHaveLength(45)
    expect(await count(`/audit_logs?use_case_id=${uc}&action=questionnaire.answered`)).toBe(audited)
  })

  it(`attaches at most ${ATTACHMENTS_PER_RECORD} questionnaires to one record, by attach and by questionnaire_ids`, async () => {
    const all = Array.from({ length: ATTACHMENTS_PER_RECORD + 1 }, (_, i) => `LONG-${i}+1`)
    const refused = await useCase('Too many at once', { questionnaire_ids: all })
    expect(refused.statusCode, refused.body.slice(0, 300)).toBe(422)
    expect(refused.json().errors).toEqual([expect.objectContaining({ field: 'questionnaire_ids' })])
    expect(await count('/use_cases?q=Too%20many%20at%20once')).toBe(0)

    const uc = (await useCase('Many attached', { questionnaire_ids: all.slice(0, ATTACHMENTS_PER_RECORD) })).json().id
    const attach = await admin()({
      method: 'POST',
      url: `/use_cases/${uc}/questionnaires`,
      payload: { key: all[ATTACHMENTS_PER_RECORD] },
    })
    expect(attach.statusCode, attach.body.slice(0, 300)).toBe(409)
    expect(await count(`/use_cases/${uc}/questionnaires?page_limit=100`)).toBe(ATTACHMENTS_PER_RECORD)
    // Detaching one makes room again.
    expect((await admin()({ method: 'DELETE', url: `/use_cases/${uc}/questionnaires/LONG-0` })).statusCode).toBe(204)
    expect(
      (
        await admin()({
          method: 'POST',
          url: `/use_cases/${uc}/questionnaires`,
          payload: { key: all[ATTACHMENTS_PER_RECORD] },
        })
      ).statusCode,
    ).toBe(201)
  })

  it(`refuses a dossier whose questionnaires hold more than ${DOSSIER_QUESTIONNAIRES_CHARS} characters, measured before reading them`, async () => {
    const attached = 9
    const uc = (
      await useCase('Heavy dossier', { questionnaire_ids: Array.from({ length: attached }, (_, i) => `LONG-${i}+1`) })
    ).json().id
    const small = await read()({ method: 'GET', url: `/use_cases/${uc}/dossier` })
    expect(small.statusCode, small.body.slice(0, 300)).toBe(200)
    for (let i = 0; i < attached; i++) {
      expect(
        (
          await admin()({
            method: 'PUT',
            url: `/use_cases/${uc}/questionnaires/LONG-${i}/answers`,
            payload: answers(0, 45),
          })
        ).statusCode,
      ).toBe(200)
    }
    const heavy = await read()({ method: 'GET', url: `/use_cases/${uc}/dossier` })
    expect(heavy.statusCode, heavy.body.slice(0, 300)).toBe(422)
    expect(heavy.json()).toMatchObject({ code: 'response_too_large' })
    expect(heavy.json().detail).toContain('/questionnaires/{key}')
    // Each questionnaire stays readable on its own route.
    expect(
      (await read()({ method: 'GET', url: `/use_cases/${uc}/questionnaires/LONG-3` })).json().answers,
    ).toHaveLength(45)
  })
})
