import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKeysService } from '../../src/modules/api-keys/api-keys.service.js'
import { systemCtx } from '../../src/shared/context.js'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../helpers/harness.js'
import { publishedControl } from '../helpers/policy.js'

type Result = CallToolResult & { structuredContent?: any }

/** The app listening on a real port, and an MCP client connected to it with the given headers. */
async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const address = t.app.server.address() as { port: number }
  return `http://127.0.0.1:${address.port}/mcp`
}

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'aigov-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<Result>

const initialize = (headers: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  }),
})

describeEachDialect('MCP over Streamable HTTP', (dialect) => {
  let t: TestApp
  let url: string
  let admin: Client
  const bearer = async (role: 'read' | 'write' | 'admin' = 'admin', tenant = 'acme') => ({
    authorization: `Bearer ${await t.token(tenant, role)}`,
  })

  beforeAll(async () => {
    t = await startTestApp(dialect, { ENABLE_MCP_SERVER: 'true' })
    url = await listen(t)
    admin = await connect(url, await bearer())
  })
  afterAll(async () => {
    await admin?.close()
    await t?.close()
  })

  it('initializes and lists every tool with a JSON Schema from the families’ schemas', async () => {
    expect(admin.getServerVersion()?.name).toBe('aigov')
    expect(admin.getInstructions()).toContain('governance_summary')
    const { tools } = await admin.listTools()
    const names = tools.map((tool) => tool.name)
    for (const name of [
      'list_use_cases',
      'get_use_case',
      'create_use_case',
      'update_use_case',
      'create_model',
      'create_vendor',
      'link_use_case_model',
      'unlink_use_case_model',
      'link_use_case_vendor',
      'link_use_case_risk_scenario',
      'apply_policy_pack',
      'update_control_status',
      'advance_workflow',
      'query_audit_logs',
      'governance_summary',
      'list_models',
      'list_vendors',
      'list_risk_types',
      'list_risk_scenarios',
      'list_workflow_stages',
      'list_policy_controls',
      'list_policy_packs',
      'list_questionnaires',
    ])
      expect(names).toContain(name)
    const create = tools.find((tool) => tool.name === 'create_use_case')!
    expect(create.inputSchema).toMatchObject({ type: 'object', required: ['name'], additionalProperties: false })
    expect(create.inputSchema.properties).toHaveProperty('risk_category_level')
    expect(create.annotations?.readOnlyHint).toBe(false)
    const list = tools.find((tool) => tool.name === 'list_use_cases')!
    expect(list.inputSchema.properties).toHaveProperty('page_limit')
    expect(list.inputSchema.properties).toHaveProperty('page_after')
    expect(list.annotations?.readOnlyHint).toBe(true)
  })

  it('creates through a tool and finds the record through a list tool and over HTTP', async () => {
    const created = await call(admin, 'create_use_case', { name: 'MCP credit scoring', risk_category_level: 'high' })
    expect(created.isError).toBeFalsy()
    expect(created.structuredContent).toMatchObject({ name: 'MCP credit scoring', risk_category_level: 'high' })
    expect(JSON.parse((created.content[0] as { text: string }).text).id).toBe(created.structuredContent.id)
    const listed = await call(admin, 'list_use_cases', { q: 'mcp credit' })
    expect(listed.structuredContent.items.map((u: any) => u.id)).toEqual([created.structuredContent.id])
    const http = await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${created.structuredContent.id}` })
    expect(http.statusCode).toBe(200)

    const user = await call(admin, 'create_user', { email: 'risk@example.com', name: 'Risk desk' })
    const owner = { owner_id: user.structuredContent.id, owner_type: 'user' }
    const updated = await call(admin, 'update_use_case', { id: created.structuredContent.id, owner })
    expect(updated.structuredContent.owner).toEqual({ ...owner, name: 'Risk desk' })
  })

  it('defines a custom field and finds a model by its value through tools', async () => {
    const field = await call(admin, 'create_custom_field', { name: 'MCP resource id', entity_types: ['model'] })
    expect(field.isError).toBeFalsy()
    const custom_fields = [{ custom_field_id: field.structuredContent.id, value: 'res-mcp-1' }]
    expect((await call(admin, 'create_model', { name: 'MCP valued model', custom_fields })).isError).toBeFalsy()
    const found = await call(admin, 'list_models', {
      custom_field_id: field.structuredContent.id,
      custom_field_value: 'res-mcp-1',
    })
    expect(found.structuredContent.items.map((m: any) => m.name)).toEqual(['MCP valued model'])
    const bad = await call(admin, 'create_model', {
      name: 'MCP bad value',
      custom_fields: [{ custom_field_id: field.structuredContent.id, value: 7 }],
    })
    expect(bad.isError).toBe(true)
    expect(bad.structuredContent.errors[0].field).toBe('custom_fields/0/value')
    expect((await call(admin, 'list_custom_fields', {})).structuredContent.items.map((f: any) => f.id)).toContain(
      field.structuredContent.id,
    )
  })

  it('pages through a list tool with next_cursor, never skipping or repeating', async () => {
    for (let i = 0; i < 5; i++)
      expect((await call(admin, 'create_model', { name: `paged model ${i}` })).isError).toBeFalsy()
    const seen: string[] = []
    let after: string | undefined
    let pages = 0
    do {
      const page = await call(admin, 'list_models', {
        q: 'paged model',
        page_limit: 2,
        ...(after ? { page_after: after } : {}),
      })
      expect(page.isError).toBeFalsy()
      seen.push(...page.structuredContent.items.map((m: any) => m.name))
      after = page.structuredContent.pagination.next_cursor ?? undefined
      pages++
    } while (after)
    expect(pages).toBe(3)
    expect(seen).toEqual([0, 1, 2, 3, 4].map((i) => `paged model ${i}`))
  })

  it('returns failures as tool errors carrying the problem document', async () => {
    const invalid = await call(admin, 'create_use_case', { description: 'no name', colour: 'red' })
    expect(invalid.isError).toBe(true)
    expect(invalid.structuredContent).toMatchObject({ code: 'validation_failed', status: 422 })
    expect(invalid.structuredContent.errors).toEqual(
      expect.arrayContaining([
        { field: 'name', message: 'is required' },
        { field: 'colour', message: 'unknown field' },
      ]),
    )

    for (const name of ['lone\ud800surrogate', 'nul\u0000name']) {
      const malformed = await call(admin, 'create_use_case', { name })
      expect(malformed.structuredContent).toMatchObject({
        code: 'validation_failed',
        errors: [expect.objectContaining({ field: 'name' })],
      })
    }
    expect((await call(admin, 'list_use_cases', { q: 'nul' })).structuredContent.items).toEqual([])

    const missing = await call(admin, 'get_use_case', { id: 'uc_00000000000000000000000000' })
    expect(missing.isError).toBe(true)
    expect(missing.structuredContent).toMatchObject({ code: 'not_found', status: 404 })
    expect(JSON.parse((missing.content[0] as { text: string }).text).detail).toContain('was not found')

    await call(admin, 'create_vendor', { name: 'Duplicate Vendor' })
    const duplicate = await call(admin, 'create_vendor', { name: 'duplicate vendor' })
    expect(duplicate.structuredContent).toMatchObject({
      code: 'already_exists',
      status: 422,
      existing_id: expect.stringMatching(/^vnd_/),
    })

    const badCursor = await call(admin, 'list_vendors', { page_after: 'not-a-cursor' })
    expect(badCursor.structuredContent).toMatchObject({ code: 'bad_request' })
  })

  it('links, unlinks and advances through tools, each audited with source mcp and the request id', async () => {
    const uc = (await call(admin, 'create_use_case', { name: 'Linked use case' })).structuredContent
    const model = (await call(admin, 'create_model', { name: 'Linked model' })).structuredContent
    const vendor = (await call(admin, 'create_vendor', { name: 'Linked vendor' })).structuredContent
    expect((await call(admin, 'link_use_case_model', { id: uc.id, model_id: model.id })).structuredContent.id).toBe(
      model.id,
    )
    expect((await call(admin, 'link_use_case_vendor', { id: uc.id, vendor_id: vendor.id })).structuredContent.id).toBe(
      vendor.id,
    )
    expect((await call(admin, 'list_use_case_models', { id: uc.id })).structuredContent.items).toHaveLength(1)
    expect(
      (await call(admin, 'unlink_use_case_vendor', { id: uc.id, vendor_id: vendor.id })).structuredContent,
    ).toMatchObject({ unlinked: true })
    expect((await call(admin, 'list_use_case_vendors', { id: uc.id })).structuredContent.items).toHaveLength(0)
    const advanced = await call(admin, 'advance_workflow', { id: uc.id })
    expect(advanced.isError).toBeFalsy()
    expect(advanced.structuredContent.workflow_stage_step).toBeTruthy()

    const audit = await call(admin, 'query_audit_logs', { use_case_id: uc.id, sort: 'created_at' })
    const records = audit.structuredContent.items as any[]
    expect(records.map((r) => r.action)).toEqual([
      'use_case.created',
      'use_case.model_linked',
      'use_case.vendor_linked',
      'use_case.vendor_unlinked',
      'use_case.workflow_advanced',
    ])
    for (const record of records) {
      expect(record.source).toBe('mcp')
      expect(record.request_id).toBeTruthy()
      expect(record.actor).toMatchObject({ type: 'api_key' })
      expect(record.actor.id).toMatch(/^key_/)
    }
    // Each HTTP request of the session has its own request id.
    expect(new Set(records.map((r) => r.request_id)).size).toBe(records.length)
  })

  it('answers questionnaires, lists control evidence and gets the dossier through tools', async () => {
    const write = t.as('acme', 'write')
    await write({
      method: 'POST',
      url: '/questionnaires',
      payload: {
        key: 'MCP-INTAKE',
        name: 'MCP intake',
        target: 'use_case',
        sections: [
          {
            id: 's',
            title: 'S',
            questions: [{ id: 'purpose', question: 'Purpose?', evidence_type: 'text', required: true }],
          },
        ],
      },
    })
    await publishedControl(t, 'acme', 'MCP-CTRL', {
      evidence_requirements: [{ type: 'link', description: 'Runbook', required: true }],
    })
    await write({
      method: 'POST',
      url: '/policy_packs',
      payload: { key: 'MCP-PACK', name: 'MCP pack', controls: [{ key: 'MCP-CTRL' }] },
    })
    const uc = (
      await write({
        method: 'POST',
        url: '/use_cases',
        payload: { name: 'MCP answered', questionnaire_ids: ['MCP-INTAKE'] },
      })
    ).json()
    await write({ method: 'POST', url: `/use_cases/${uc.id}/policy_packs`, payload: { key: 'MCP-PACK' } })
    const control = (await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${uc.id}/controls` })).json().items[0]
    const ev = (
      await write({
        method: 'POST',
        url: '/evidence',
        payload: { kind: 'link', url: 'https://runbook.example.com', title: 'Runbook' },
      })
    ).json()
    await write({
      method: 'POST',
      url: `/use_cases/${uc.id}/controls/${control.id}/evidence`,
      payload: { evidence_id: ev.id },
    })

    const answered = await call(admin, 'answer_questionnaire', {
      target: 'use_case',
      id: uc.id,
      key: 'MCP-INTAKE',
      answers: [{ question_id: 'purpose', value: 'Triage' }],
    })
    expect(answered.isError, JSON.stringify(answered.content)).toBeFalsy()
    expect(answered.structuredContent.progress).toMatchObject({ answered: 1, complete: true })
    const bad = await call(admin, 'answer_questionnaire', {
      target: 'use_case',
      id: uc.id,
      key: 'MCP-INTAKE',
      answers: [{ question_id: 'purpose', value: 3 }],
    })
    expect(bad.isError).toBe(true)
    expect(
      (await call(admin, 'get_questionnaire_answers', { target: 'use_case', id: uc.id, key: 'MCP-INTAKE' }))
        .structuredContent.answers[0],
    ).toMatchObject({ question_id: 'purpose', value: 'Triage' })
    expect(
      (await call(admin, 'list_control_evidence', { id: uc.id, control_id: control.id })).structuredContent.items[0]
        .evidence.id,
    ).toBe(ev.id)
    const dossier = (await call(admin, 'get_use_case_dossier', { id: uc.id })).structuredContent
    expect(dossier.use_case.id).toBe(uc.id)
    expect(dossier.gaps).toEqual({ missing_answers: [], missing_evidence: [] })
    const audit = (await call(admin, 'query_audit_logs', { use_case_id: uc.id, action: 'questionnaire.answered' }))
      .structuredContent.items
    expect(audit.map((r: { source: string }) => r.source)).toEqual(['mcp'])
  })

  it('serves governance://use_cases/{id} as a resource template and a readable resource', async () => {
    const { resourceTemplates } = await admin.listResourceTemplates()
    expect(resourceTemplates.map((r) => r.uriTemplate)).toContain('governance://use_cases/{id}')
    const uc = (await call(admin, 'create_use_case', { name: 'Resource use case', risk_category_level: 'medium' }))
      .structuredContent
    const model = (await call(admin, 'create_model', { name: 'Resource model' })).structuredContent
    await call(admin, 'link_use_case_model', { id: uc.id, model_id: model.id })

    const read = await admin.readResource({ uri: `governance://use_cases/${uc.id}` })
    const overview = JSON.parse((read.contents[0] as { text: string }).text)
    expect(read.contents[0].mimeType).toBe('application/json')
    expect(overview.use_case).toMatchObject({ id: uc.id, name: 'Resource use case' })
    expect(overview.models.map((m: any) => m.id)).toEqual([model.id])
    expect(overview).toMatchObject({ vendors: [], risk_scenarios: [], policy_packs: [], controls: { total: 0 } })
    expect(overview.workflow.workflow_stage_step).toBeTruthy()

    const { resources } = await admin.listResources()
    expect(resources.map((r) => r.uri)).toContain(`governance://use_cases/${uc.id}`)
    await expect(admin.readResource({ uri: 'governance://use_cases/uc_00000000000000000000000000' })).rejects.toThrow(
      /not found/,
    )
  })

  it('answers "which high-risk use cases have controls overdue?" with governance_summary', async () => {
    const other = await startTestApp(dialect, { ENABLE_MCP_SERVER: 'true' })
    try {
      const client = await connect(await listen(other), {
        authorization: `Bearer ${await other.token('acme', 'admin')}`,
      })
      await publishedControl(other, 'acme', 'SUM-1')
      await publishedControl(other, 'acme', 'SUM-2')
      const pack = await other.as(
        'acme',
        'write',
      )({
        method: 'POST',
        url: '/policy_packs',
        payload: { key: 'SUM-PACK', name: 'Summary pack', controls: [{ key: 'SUM-1' }, { key: 'SUM-2' }] },
      })
      expect(pack.statusCode).toBe(201)
      const make = async (name: string, level: string | null) =>
        (await call(client, 'create_use_case', { name, risk_category_level: level })).structuredContent.id as string
      const overdueHigh = await make('Credit scoring', 'high')
      const onTimeHigh = await make('Fraud detection', 'high')
      const overdueMedium = await make('Chatbot', 'medium')
      await make('Unrated', null)
      for (const [id, due] of [
        [overdueHigh, '2020-01-01'],
        [onTimeHigh, '2999-01-01'],
        [overdueMedium, '2020-06-01'],
      ]) {
        const applied = await call(client, 'apply_policy_pack', { id, key: 'SUM-PACK', due_date: due })
        expect(applied.isError, JSON.stringify(applied.structuredContent)).toBeFalsy()
      }
      // One of the medium use case's two controls is done: only the other is overdue.
      const controls = (await call(client, 'list_use_case_controls', { id: overdueMedium })).structuredContent.items
      const done = await call(client, 'update_control_status', {
        id: overdueMedium,
        control_id: controls[0].id,
        status: 'implemented',
        notes: 'done',
      })
      expect(done.structuredContent).toMatchObject({ status: 'implemented', notes: 'done' })

      const summary = (await call(client, 'governance_summary')).structuredContent
      expect(summary.as_of).toBe(new Date().toISOString().slice(0, 10))
      expect(summary.use_cases).toMatchObject({
        total: 4,
        by_risk_level: { high: 2, medium: 1, low: 0, none: 0, unset: 1 },
      })
      expect(summary.use_cases.by_workflow_stage).toHaveLength(1)
      expect(summary.use_cases.by_workflow_stage[0]).toMatchObject({ total: 4, position: 0 })
      expect(summary.controls).toMatchObject({
        total: 6,
        by_status: { pending: 5, in_progress: 0, implemented: 1, not_applicable: 0 },
        overdue: 3,
      })
      expect(summary.overdue_use_cases).toEqual([
        {
          id: overdueHigh,
          name: 'Credit scoring',
          risk_category_level: 'high',
          overdue_controls: 2,
          earliest_due_date: '2020-01-01',
        },
        {
          id: overdueMedium,
          name: 'Chatbot',
          risk_category_level: 'medium',
          overdue_controls: 1,
          earliest_due_date: '2020-06-01',
        },
      ])
      expect(summary.overdue_use_cases_total).toBe(2)
      const highOverdue = summary.overdue_use_cases
        .filter((u: any) => u.risk_category_level === 'high')
        .map((u: any) => u.name)
      expect(highOverdue).toEqual(['Credit scoring'])

      // as_of moves "today"; the same numbers come from the HTTP route.
      const past = (await call(client, 'governance_summary', { as_of: '2019-01-01' })).structuredContent
      expect(past.controls.overdue).toBe(0)
      const http = await other.as('acme', 'read')({ method: 'GET', url: '/governance_summary' })
      expect(http.statusCode).toBe(200)
      expect(http.json().overdue_use_cases).toEqual(summary.overdue_use_cases)
      // Another tenant sees none of it.
      const foreign = await other.as('globex', 'read')({ method: 'GET', url: '/governance_summary' })
      expect(foreign.json()).toMatchObject({
        use_cases: { total: 0 },
        controls: { total: 0, overdue: 0 },
        overdue_use_cases: [],
      })
      await client.close()
    } finally {
      await other.close()
    }
  })

  it('answers 401 before any MCP message without a valid credential', async () => {
    const none = await fetch(url, initialize({}))
    expect(none.status).toBe(401)
    expect(none.headers.get('content-type')).toContain('application/problem+json')
    expect(await none.json()).toMatchObject({ code: 'unauthorized', status: 401 })
    expect((await fetch(url, initialize({ authorization: 'Bearer not-a-token' }))).status).toBe(401)
    expect((await fetch(url, initialize({ 'x-api-key': 'sk_wrong', 'x-tenant': 'acme' }))).status).toBe(401)
    await expect(connect(url, { authorization: 'Bearer nope' })).rejects.toThrow()
  })

  it('accepts X-API-Key + X-Tenant like the token exchange, and refuses it for another tenant', async () => {
    const secret = await t.apiKey('acme', 'write')
    const client = await connect(url, { 'x-api-key': secret, 'x-tenant': 'acme' })
    const created = await call(client, 'create_vendor', { name: 'Vendor via API key' })
    expect(created.isError).toBeFalsy()
    await client.close()
    expect((await fetch(url, initialize({ 'x-api-key': secret, 'x-tenant': 'globex' }))).status).toBe(401)
    expect((await fetch(url, initialize({ 'x-api-key': secret }))).status).toBe(401)
  })

  it('refuses write tools for a read key, and keeps the tenant of the credential', async () => {
    const reader = await connect(url, await bearer('read'))
    const names = (await reader.listTools()).tools.map((tool) => tool.name)
    expect(names).toContain('create_use_case')
    const refused = await call(reader, 'create_use_case', { name: 'Should not exist' })
    expect(refused.isError).toBe(true)
    // The same message, and instance, as over stdio (test/mcp-stdio.test.ts).
    expect(refused.structuredContent).toMatchObject({
      code: 'forbidden',
      status: 403,
      instance: 'tools/create_use_case',
      role: 'read',
      required_role: 'write',
      detail: 'this API key has role "read"; create_use_case changes data and needs "write"',
    })
    const writer = await connect(url, await bearer('write'))
    const definition = await call(writer, 'create_custom_field', { name: "Not a writer's to define", required: true })
    expect(definition.structuredContent).toMatchObject({
      code: 'forbidden',
      status: 403,
      instance: 'tools/create_custom_field',
      detail: 'this API key has role "write"; create_custom_field changes the tenant\'s definitions and needs "admin"',
    })
    expect((await call(reader, 'list_custom_fields', { q: 'Not a writer' })).structuredContent.items).toEqual([])
    await writer.close()
    expect((await call(reader, 'list_use_cases', { q: 'Should not exist' })).structuredContent.items).toEqual([])
    await reader.close()

    // Another tenant's records answer not found.
    const mine = (await call(admin, 'create_use_case', { name: 'Tenant-bound use case' })).structuredContent
    const foreign = await connect(url, await bearer('admin', 'globex'))
    expect((await call(foreign, 'get_use_case', { id: mine.id })).structuredContent).toMatchObject({
      code: 'not_found',
    })
    await foreign.close()
  })

  it('exports and plans configuration for a read key, applies it for admin only, with the plan pinned', async () => {
    const reader = await connect(url, await bearer('read'))
    const exported = await call(reader, 'configuration_export')
    expect(exported.isError).toBeFalsy()
    const { document } = exported.structuredContent
    expect(document.apiVersion).toBe('aigov/v1')
    const over = await t.as('acme', 'read')({ method: 'GET', url: '/configuration' })
    expect(document).toEqual(over.json())
    const yaml = await call(reader, 'configuration_export', { format: 'yaml' })
    expect(yaml.structuredContent.text).toBe(
      (await t.as('acme', 'read')({ method: 'GET', url: '/configuration', headers: { accept: 'application/yaml' } }))
        .body,
    )
    const wanted = { ...document, risk_types: [...document.risk_types, { name: 'Planned over MCP' }] }
    const plan = await call(reader, 'configuration_plan', { document: wanted })
    expect(plan.isError).toBeFalsy()
    expect(plan.structuredContent.summary).toMatchObject({ create: 1, update: 0, delete: 0 })
    expect(plan.structuredContent.changes).toContainEqual(
      expect.objectContaining({ section: 'risk_types', key: 'Planned over MCP', action: 'create' }),
    )
    // YAML text too, with the place of an error.
    const bad = await call(reader, 'configuration_plan', {
      document: 'apiVersion: aigov/v1\nrisk_types:\n  - nom: x\n',
    })
    expect(bad.isError).toBe(true)
    expect(bad.structuredContent).toMatchObject({ code: 'validation_failed' })
    expect(JSON.stringify(bad.structuredContent.errors)).toContain('"line":3')

    // Apply: admin only, as POST /configuration/apply.
    const args = { document: wanted, plan_id: plan.structuredContent.plan_id }
    const refused = await call(reader, 'configuration_apply', args)
    expect(refused.structuredContent).toMatchObject({ code: 'forbidden', role: 'read', required_role: 'admin' })
    const writer = await connect(url, await bearer('write'))
    expect((await call(writer, 'configuration_apply', args)).structuredContent).toMatchObject({
      code: 'forbidden',
      instance: 'tools/configuration_apply',
      required_role: 'admin',
    })
    await writer.close()
    const applied = await call(admin, 'configuration_apply', args)
    expect(applied.isError, JSON.stringify(applied.structuredContent)).toBeFalsy()
    expect(applied.structuredContent.applied).toBe(1)
    const stale = await call(admin, 'configuration_apply', args)
    expect(stale.structuredContent).toMatchObject({ code: 'conflict', status: 409 })
    const audit = await t.as('acme', 'admin')({ method: 'GET', url: '/audit_logs?action=configuration.applied' })
    expect(audit.json().items[0]).toMatchObject({ source: 'mcp', metadata: { plan_id: args.plan_id } })
    expect((await call(reader, 'configuration_plan', { document: wanted })).structuredContent.summary.create).toBe(0)
    await reader.close()
  })

  it('is stateless: no session to hijack, every request carries its own credential, GET and DELETE are 405', async () => {
    const first = await fetch(url, initialize(await bearer('admin')))
    expect(first.status).toBe(200)
    expect(first.headers.get('mcp-session-id')).toBeNull()
    await first.body?.cancel()
    const list = (headers: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      })
    expect((await list({})).status).toBe(401)
    const own = await list(await bearer('read'))
    expect(own.status).toBe(200)
    expect((await own.json()).result.tools.length).toBeGreaterThan(10)

    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, {
        method,
        headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18', ...(await bearer('admin')) },
      })
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('POST')
      expect(await res.json()).toMatchObject({ code: 'method_not_allowed' })
    }
  })

  it('stops a revoked key at once, on an open session too', async () => {
    const created = await createApiKeysService(t.deps).create(systemCtx('acme'), { name: 'to revoke', role: 'write' })
    const token = (
      await t.app.inject({
        method: 'POST',
        url: `${PREFIX}/auth/token`,
        headers: { 'x-api-key': created.key, 'x-tenant': 'acme' },
      })
    ).json().access_token
    const client = await connect(url, { authorization: `Bearer ${token}` })
    expect((await call(client, 'list_use_cases', { page_limit: 1 })).isError).toBeFalsy()
    await createApiKeysService(t.deps).revoke(systemCtx('acme'), created.id)
    await expect(call(client, 'list_use_cases', { page_limit: 1 })).rejects.toThrow(/401/)
    expect((await fetch(url, initialize({ authorization: `Bearer ${token}` }))).status).toBe(401)
  })

  it('records the source a caller declares (mcp or cli), never a claimed system source', async () => {
    const write = t.as('acme', 'write')
    for (const [declared, recorded] of [
      ['mcp', 'mcp'],
      ['cli', 'cli'],
      ['system', 'api'],
      ['nonsense', 'api'],
    ]) {
      const res = await write({
        method: 'POST',
        url: '/vendors',
        headers: { 'x-aigov-source': declared },
        payload: { name: `Declared ${declared}` },
      })
      expect(res.statusCode).toBe(201)
      const audit = await write({ method: 'GET', url: `/audit_logs?resource_id=${res.json().id}` })
      expect(audit.json().items[0].source).toBe(recorded)
    }
  })

  it('sends a request id and rate-limit headers on /mcp responses', async () => {
    const res = await fetch(url, initialize({ ...(await bearer()), 'x-request-id': 'mcp-req-1' }))
    expect(res.headers.get('x-request-id')).toBe('mcp-req-1')
    expect(res.headers.get('ratelimit-limit')).toBeTruthy()
    await res.body?.cancel()
  })
})

describe('MCP switches', () => {
  it('answers 404 at /mcp when the MCP server is off', async () => {
    const t = await startTestApp('sqlite')
    try {
      const res = await t.app.inject({ method: 'POST', url: '/mcp', payload: {} })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ code: 'not_found' })
      expect((await t.as('acme', 'read')({ method: 'GET', url: '/system' })).json().features.mcp).toBe(false)
    } finally {
      await t.close()
    }
  })

  it('offers only reading tools with MCP_READ_ONLY', async () => {
    const t = await startTestApp('sqlite', { ENABLE_MCP_SERVER: 'true', MCP_READ_ONLY: 'true' })
    try {
      const client = await connect(await listen(t), { authorization: `Bearer ${await t.token('acme', 'admin')}` })
      const tools = (await client.listTools()).tools
      const names = tools.map((tool) => tool.name)
      expect(names).toContain('list_use_cases')
      expect(names).toContain('governance_summary')
      expect(names).toContain('query_audit_logs')
      for (const writer of [
        'create_use_case',
        'update_use_case',
        'create_model',
        'create_vendor',
        'link_use_case_model',
        'apply_policy_pack',
        'update_control_status',
        'advance_workflow',
      ]) {
        expect(names).not.toContain(writer)
      }
      expect(tools.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true)
      await expect(client.callTool({ name: 'create_use_case', arguments: { name: 'x' } })).rejects.toThrow(
        /unknown tool/,
      )
      await client.close()
    } finally {
      await t.close()
    }
  })
})
