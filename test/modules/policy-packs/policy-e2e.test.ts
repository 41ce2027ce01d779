import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../../helpers/harness.js'

/** The "done when" story, as an integration would do it over HTTP on a tenant with the starter library. */
describeEachDialect('policy library end to end', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect, { SERVICE_STARTER_LIBRARY: 'true' })
  })
  afterAll(async () => t?.close())

  it('lists starter packs, applies the EU AI Act pack, implements a control, and finds every step in the audit log', async () => {
    const apiKey = await t.apiKey('demo', 'write')
    const token = await t.app.inject({
      method: 'POST',
      url: `${PREFIX}/auth/token`,
      headers: { 'x-api-key': apiKey, 'x-tenant': 'demo' },
    })
    expect(token.statusCode).toBe(200)
    const call = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) =>
      t.app.inject({
        method,
        url: `${PREFIX}${path}`,
        payload: payload as Record<string, unknown>,
        headers: { authorization: `Bearer ${token.json().access_token}`, 'x-tenant': 'demo' },
      })

    const packs = await call('GET', '/policy_packs')
    expect(packs.statusCode).toBe(200)
    const keys = packs.json().items.map((p: { key: string }) => p.key)
    expect(keys).toEqual(expect.arrayContaining(['EU-AI-ACT-HIGH-RISK', 'NIST-AI-RMF', 'ISO-IEC-42001']))
    const euPack = packs.json().items.find((p: { key: string }) => p.key === 'EU-AI-ACT-HIGH-RISK')

    const useCase = await call('POST', '/use_cases', { name: 'CV screening assistant', risk_category_level: 'high' })
    expect(useCase.statusCode).toBe(201)
    const uc = useCase.json().id

    const applied = await call('POST', `/use_cases/${uc}/policy_packs`, {
      key: 'EU-AI-ACT-HIGH-RISK',
      due_date: '2027-08-02',
    })
    expect(applied.statusCode, applied.body).toBe(201)
    expect(applied.json()).toMatchObject({ key: 'EU-AI-ACT-HIGH-RISK', version: 1 })

    const controls = await call('GET', `/use_cases/${uc}/controls?page_limit=100`)
    expect(controls.statusCode).toBe(200)
    const items = controls.json().items as {
      id: string
      control_key: string
      status: string
      policy_pack_key: string
    }[]
    expect(items.map((c) => c.control_key)).toEqual(euPack.controls.map((c: { key: string }) => c.key))
    expect(items.every((c) => c.status === 'pending' && c.policy_pack_key === 'EU-AI-ACT-HIGH-RISK')).toBe(true)

    const oversight = items.find((c) => c.control_key === 'EUAIA-ART14')!
    const done = await call('PATCH', `/use_cases/${uc}/controls/${oversight.id}`, {
      status: 'implemented',
      notes: 'Reviewer can reject any ranking; tested.',
    })
    expect(done.statusCode).toBe(200)
    expect(done.json().status).toBe('implemented')
    expect((await call('GET', `/use_cases/${uc}/controls/${oversight.id}`)).json().status).toBe('implemented')

    const audit = await call('GET', `/audit_logs?use_case_id=${uc}&page_limit=100`)
    const records = audit.json().items as {
      action: string
      resource_id: string
      sub_object_name: string | null
      changes: Record<string, unknown> | null
      actor: { type: string }
    }[]
    expect(records.map((r) => r.action)).toEqual([
      'use_case.created',
      'policy_pack.applied',
      ...items.map(() => 'use_case_control.created'),
      'use_case_control.updated',
    ])
    expect(records[1].sub_object_name).toBe('EU-AI-ACT-HIGH-RISK v1')
    expect(records.at(-1)).toMatchObject({ resource_id: oversight.id, changes: { status: ['pending', 'implemented'] } })
    expect(records.every((r) => r.actor.type === 'api_key')).toBe(true)

    const starter = await call('GET', `/audit_logs?resource_id=${euPack.id}`)
    expect(starter.json().items.map((r: { action: string; source: string }) => `${r.action}/${r.source}`)).toEqual([
      'policy_pack.created/system',
    ])
  })
})
