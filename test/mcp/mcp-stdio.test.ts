import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { offeredTools } from '../../src/mcp/server.js'
import { freshDatabase, PREFIX, type TestDatabase } from '../helpers/harness.js'
import { CLI, runCli, type ServiceProcess, startServiceProcess } from '../helpers/process.js'

type Result = CallToolResult & { structuredContent?: any }

const ADMIN_KEY = `sk_${'stdioTestAdminKey0123456789'.repeat(2)}`
const TENANT = 'acme'

/** `aigov mcp --stdio` as an assistant starts it, connected with the SDK's stdio client. */
async function startStdio(baseUrl: string, apiKey: string, env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--stdio'],
    env: {
      PATH: process.env.PATH ?? '',
      SERVICE_API_URL: baseUrl,
      SERVICE_API_KEY: apiKey,
      SERVICE_TENANT: TENANT,
      ...env,
    },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk) => (stderr += chunk))
  const client = new Client({ name: 'aigov-stdio-test', version: '1.0.0' })
  await client.connect(transport)
  return { client, stderr: () => stderr }
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<Result>

describe('MCP over stdio (aigov mcp --stdio → the TypeScript client → a running service)', () => {
  let db: TestDatabase
  let service: ServiceProcess
  let mcp: Awaited<ReturnType<typeof startStdio>>

  beforeAll(async () => {
    db = await freshDatabase('sqlite')
    service = await startServiceProcess({
      ...db.env,
      SERVICE_API_KEY: ADMIN_KEY,
      SERVICE_TENANT: TENANT,
      SERVICE_JWT_SECRET: 'stdio-test-secret-that-is-at-least-32-bytes',
      SERVICE_STARTER_LIBRARY: 'false',
    })
    mcp = await startStdio(service.baseUrl, ADMIN_KEY)
  })
  afterAll(async () => {
    await mcp?.client.close()
    await service?.stop()
    await db?.drop()
  })

  it('initializes and lists the same tools as /mcp', async () => {
    expect(mcp.client.getServerVersion()?.name).toBe('aigov')
    const names = (await mcp.client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual(offeredTools(false).map((tool) => tool.name))
  })

  it('creates, lists and pages through tools in snake_case, audited with source mcp', async () => {
    const created = await call(mcp.client, 'create_use_case', {
      name: 'Stdio credit scoring',
      risk_category_level: 'high',
      regions: ['EU'],
    })
    expect(created.isError).toBeFalsy()
    expect(created.structuredContent).toMatchObject({
      name: 'Stdio credit scoring',
      risk_category_level: 'high',
      regions: ['EU'],
      workflow_stage_step: expect.any(String),
    })
    const id = created.structuredContent.id as string

    for (let i = 0; i < 3; i++) await call(mcp.client, 'create_model', { name: `stdio model ${i}`, model_type: 'llm' })
    const first = await call(mcp.client, 'list_models', { page_limit: 2 })
    expect(first.structuredContent.items).toHaveLength(2)
    expect(first.structuredContent.items[0]).toHaveProperty('model_type', 'llm')
    const cursor = first.structuredContent.pagination.next_cursor
    expect(first.structuredContent.pagination.has_more).toBe(true)
    const second = await call(mcp.client, 'list_models', { page_limit: 2, page_after: cursor })
    expect(second.structuredContent.items.map((m: any) => m.name)).toEqual(['stdio model 2'])
    expect(second.structuredContent.pagination.next_cursor).toBeNull()

    const linked = await call(mcp.client, 'link_use_case_model', { id, model_id: first.structuredContent.items[0].id })
    expect(linked.isError).toBeFalsy()

    const audit = await call(mcp.client, 'query_audit_logs', { use_case_id: id, sort: 'created_at' })
    const records = audit.structuredContent.items as any[]
    expect(records.map((r) => r.action)).toEqual(['use_case.created', 'use_case.model_linked'])
    for (const record of records)
      expect(record).toMatchObject({ source: 'mcp', actor: { type: 'api_key' }, request_id: expect.any(String) })
    // The audit record's free-form changes keep the wire's field names.
    expect(records[0].changes).toHaveProperty('risk_category_level')

    const overview = JSON.parse(
      ((await mcp.client.readResource({ uri: `governance://use_cases/${id}` })).contents[0] as { text: string }).text,
    )
    expect(overview.use_case.id).toBe(id)
    expect(overview.models).toHaveLength(1)

    const summary = await call(mcp.client, 'governance_summary')
    expect(summary.structuredContent.use_cases.by_risk_level.high).toBe(1)
  })

  it('returns the service’s problem document as a tool error', async () => {
    const missing = await call(mcp.client, 'get_use_case', { id: 'uc_00000000000000000000000000' })
    expect(missing.isError).toBe(true)
    expect(missing.structuredContent).toMatchObject({ code: 'not_found', status: 404, request_id: expect.any(String) })
    const invalid = await call(mcp.client, 'create_vendor', { website: 'https://vendor.example.com' })
    expect(invalid.structuredContent).toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'name', message: 'is required' }],
    })
  })

  it('exports, plans (JSON or YAML) and applies configuration through the client, keeping the wire keys', async () => {
    const exported = await call(mcp.client, 'configuration_export')
    expect(exported.isError, JSON.stringify(exported.structuredContent)).toBeFalsy()
    const { document } = exported.structuredContent
    expect(document.apiVersion).toBe('aigov/v1')
    expect(document).toHaveProperty('workflow_stages')
    const same = await call(mcp.client, 'configuration_plan', { document })
    expect(same.structuredContent.summary).toMatchObject({ create: 0, update: 0, delete: 0 })
    const text = `${(await call(mcp.client, 'configuration_export', { format: 'yaml' })).structuredContent.text}`
    const yaml = text.replace(/^risk_types: \[\]\n/m, 'risk_types:\n  - name: Planned over stdio\n')
    expect(yaml).toContain('Planned over stdio')
    const plan = await call(mcp.client, 'configuration_plan', { document: yaml })
    expect(plan.isError, JSON.stringify(plan.structuredContent)).toBeFalsy()
    expect(plan.structuredContent.summary).toMatchObject({ create: 1 })
    const applied = await call(mcp.client, 'configuration_apply', {
      document: yaml,
      plan_id: plan.structuredContent.plan_id,
    })
    expect(applied.isError, JSON.stringify(applied.structuredContent)).toBeFalsy()
    expect(applied.structuredContent).toMatchObject({ applied: 1, plan_id: plan.structuredContent.plan_id })
    const after = (await call(mcp.client, 'configuration_export')).structuredContent.document
    expect(after.risk_types.map((r: { name: string }) => r.name)).toContain('Planned over stdio')
    const stale = await call(mcp.client, 'configuration_apply', { document, plan_id: plan.structuredContent.plan_id })
    expect(stale.structuredContent).toMatchObject({ code: 'conflict', status: 409 })
  })

  it('refuses writes for a read key (the service answers 403), naming the tool as /mcp does, and hides writers when read-only', async () => {
    const token = (
      await (
        await fetch(`${service.baseUrl}${PREFIX}/auth/token`, {
          method: 'POST',
          headers: { 'x-api-key': ADMIN_KEY, 'x-tenant': TENANT },
        })
      ).json()
    ).access_token
    const keyOf = async (role: string) =>
      (
        await (
          await fetch(`${service.baseUrl}${PREFIX}/api_keys`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `stdio ${role}`, role }),
          })
        ).json()
      ).key as string
    const reader = await startStdio(service.baseUrl, await keyOf('read'))
    try {
      const refused = await call(reader.client, 'create_use_case', { name: 'Not allowed' })
      expect(refused.isError).toBe(true)
      // The same message, and instance, as over /mcp (test/mcp.test.ts): the tool, not the HTTP route behind it.
      expect(refused.structuredContent).toMatchObject({
        code: 'forbidden',
        status: 403,
        instance: 'tools/create_use_case',
        role: 'read',
        required_role: 'write',
        request_id: expect.any(String),
        detail: 'this API key has role "read"; create_use_case changes data and needs "write"',
      })
      expect((await call(reader.client, 'list_use_cases')).isError).toBeFalsy()
    } finally {
      await reader.client.close()
    }
    const writer = await startStdio(service.baseUrl, await keyOf('write'))
    try {
      const refused = await call(writer.client, 'create_custom_field', {
        name: "Not a writer's to define",
        required: true,
      })
      expect(refused.structuredContent).toMatchObject({
        code: 'forbidden',
        status: 403,
        instance: 'tools/create_custom_field',
        detail:
          'this API key has role "write"; create_custom_field changes the tenant\'s definitions and needs "admin"',
      })
      expect((await call(writer.client, 'create_vendor', { name: "A writer's vendor" })).isError).toBeFalsy()
    } finally {
      await writer.client.close()
    }

    const readOnly = await startStdio(service.baseUrl, ADMIN_KEY, { MCP_READ_ONLY: 'true' })
    try {
      const names = (await readOnly.client.listTools()).tools.map((tool) => tool.name)
      expect(names).toEqual(offeredTools(true).map((tool) => tool.name))
      expect(names).not.toContain('create_use_case')
      expect(names).toContain('governance_summary')
    } finally {
      await readOnly.client.close()
    }
  })

  it('logs to stderr only, and reports a bad credential as tool errors', async () => {
    expect(mcp.stderr()).toContain('serving tools over stdio for tenant acme')
    const wrong = await startStdio(service.baseUrl, 'sk_not_a_real_key')
    try {
      const res = await call(wrong.client, 'list_use_cases')
      expect(res.isError).toBe(true)
      expect(res.structuredContent).toMatchObject({ code: 'unauthorized', status: 401 })
      expect(wrong.stderr()).toContain('refused the credential or did not answer')
    } finally {
      await wrong.client.close()
    }
  })

  it('has only the stdio transport on the command line', () => {
    const res = runCli(['mcp'], { SERVICE_API_URL: service.baseUrl })
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('--stdio')
    expect(runCli(['--help'], {}).stdout).toContain('aigov mcp --stdio')
  })
})
