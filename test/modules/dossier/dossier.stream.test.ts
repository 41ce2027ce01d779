import { afterAll, beforeAll, expect, it } from 'vitest'
import { AppError } from '../../../src/http/errors.js'
import { WHOLE_DOSSIER_CHARS } from '../../../src/modules/dossier/dossier.service.js'
import { systemCtx } from '../../../src/shared/context.js'
import { createServices } from '../../../src/services.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { publishedControl } from '../../helpers/policy.js'

// The dossier is streamed a page at a time: the document is the one the whole value gives, across many pages.

describeEachDialect('dossier streamed', (dialect) => {
  let t: TestApp
  let useCaseId: string
  beforeAll(async () => {
    t = await startTestApp(dialect)
    const write = t.as('acme', 'write')
    const keys: { key: string }[] = []
    for (let i = 0; i < 23; i++) {
      await publishedControl(t, 'acme', `C${String(i).padStart(2, '0')}`, {
        name: `Control ${i}`,
        evidence_requirements: [{ type: 'file', description: 'Proof', required: true }],
      })
      keys.push({ key: `C${String(i).padStart(2, '0')}` })
    }
    expect(
      (await write({ method: 'POST', url: '/policy_packs', payload: { key: 'BIG', name: 'Big', controls: keys } }))
        .statusCode,
    ).toBe(201)
    useCaseId = (
      await write({ method: 'POST', url: '/use_cases', payload: { name: 'Many links', description: 'd'.repeat(5000) } })
    ).json().id
    expect(
      (await write({ method: 'POST', url: `/use_cases/${useCaseId}/policy_packs`, payload: { key: 'BIG' } }))
        .statusCode,
    ).toBe(201)
    for (let i = 0; i < 27; i++) {
      const model = (
        await write({
          method: 'POST',
          url: '/models',
          payload: { name: `Model ${i}`, summary: `"quoted" \\ ${'é'.repeat(i * 10)}` },
        })
      ).json()
      expect(
        (await write({ method: 'POST', url: `/use_cases/${useCaseId}/models`, payload: { id: model.id } })).statusCode,
      ).toBe(201)
    }
    const controls = (
      await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${useCaseId}/controls?page_limit=100` })
    ).json().items
    for (const [i, control] of controls.slice(0, 12).entries()) {
      const ev = (
        await write({
          method: 'POST',
          url: '/evidence',
          payload: { kind: 'link', url: `https://proof.example.com/${i}`, title: `Proof ${i}` },
        })
      ).json()
      expect(
        (
          await write({
            method: 'POST',
            url: `/use_cases/${useCaseId}/controls/${control.id}/evidence`,
            payload: { evidence_id: ev.id, requirement: 0 },
          })
        ).statusCode,
      ).toBe(201)
    }
  })
  afterAll(async () => t?.close())

  it('answers JSON chunked that parses to exactly the whole dossier, lists in order across pages', async () => {
    const res = await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${useCaseId}/dossier` })
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['content-length']).toBeUndefined()
    const streamed = res.json()
    const whole = await createServices(t.deps).dossier.get(systemCtx('acme'), useCaseId)
    expect({ ...streamed, generated_at: null }).toEqual(JSON.parse(JSON.stringify({ ...whole, generated_at: null })))
    expect(streamed.models).toHaveLength(27)
    expect(streamed.controls.map((c: { control_key: string }) => c.control_key)).toEqual(
      [...Array(23).keys()].map((i) => `C${String(i).padStart(2, '0')}`),
    )
    expect(streamed.evidence).toHaveLength(12)
    expect(streamed.controls.filter((c: { evidence: unknown[] }) => c.evidence.length === 1)).toHaveLength(12)
    expect(Object.keys(streamed)).toEqual([
      'generated_at',
      'use_case',
      'workflow',
      'workflow_history',
      'workflow_stage_names',
      'models',
      'vendors',
      'risk_scenarios',
      'policy_packs',
      'controls',
      'questionnaires',
      'evidence',
      'gaps',
    ])
  })

  it('writes the page with every record of every page', async () => {
    const res = await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${useCaseId}/dossier?format=html` })
    expect(res.statusCode).toBe(200)
    expect(res.body.match(/<div class="control">/g)).toHaveLength(23)
    for (let i = 0; i < 27; i++) expect(res.body).toContain(`<td>Model ${i}</td>`)
    expect(res.body.trimEnd().endsWith('</html>')).toBe(true)
    expect(res.body).toContain('<section id="vendors"><h2>Vendors</h2><p class="muted">None.</p></section>')
  })

  it('is refused whole (MCP) past WHOLE_DOSSIER_CHARS with response_too_large naming the stream, which answers in full', async () => {
    const write = t.as('acme', 'write')
    const big = (await write({ method: 'POST', url: '/use_cases', payload: { name: 'Too big to hold' } })).json().id
    const count = Math.ceil(WHOLE_DOSSIER_CHARS / 99_000) + 2
    for (let i = 0; i < count; i++) {
      const model = (
        await write({ method: 'POST', url: '/models', payload: { name: `Big ${i}`, summary: 'b'.repeat(99_000) } })
      ).json()
      await write({ method: 'POST', url: `/use_cases/${big}/models`, payload: { id: model.id } })
    }
    const refused = await createServices(t.deps)
      .dossier.get(systemCtx('acme'), big)
      .then(
        () => null,
        (err: unknown) => err,
      )
    expect(refused).toBeInstanceOf(AppError)
    expect((refused as AppError).code).toBe('response_too_large')
    expect((refused as AppError).status).toBe(422)
    expect((refused as AppError).detail).toContain(`GET /api/v1/integration/use_cases/${big}/dossier streams it whole`)
    const res = await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${big}/dossier` })
    expect(res.statusCode).toBe(200)
    expect(res.json().models).toHaveLength(count)
  }, 60_000)

  it('is still a 404 problem for a missing use case', async () => {
    const res = await t.as('acme', 'read')({ method: 'GET', url: '/use_cases/uc_missing/dossier' })
    expect(res.statusCode).toBe(404)
    expect(res.json().code).toBe('not_found')
  })
})
