import { createConfig, lintFromString } from '@redocly/openapi-core'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TOOLS } from '../../src/mcp/tools.js'
import { startTestApp, type TestApp } from '../helpers/harness.js'
import { dereference } from '../helpers/openapi.js'

const crud = (family: string, plural = `${family}s`) => [
  `list${plural}`,
  `get${family}`,
  `create${family}`,
  `update${family}`,
  `delete${family}`,
]

/** Every operation the contract promises, by family: a route that disappears or is renamed fails here. */
const OPERATIONS = {
  auth: ['createToken', 'listApiKeys', 'getApiKey', 'createApiKey', 'revokeApiKey'],
  health: ['getLiveness', 'getReadiness', 'getSystem', 'ping', 'getGovernanceSummary'],
  useCases: crud('UseCase'),
  catalog: [
    ...['Model', 'Vendor', 'RiskType', 'RiskScenario'].flatMap((family) => crud(family)),
    ...['UseCaseModel', 'UseCaseVendor', 'UseCaseRiskScenario', 'ModelVendor'].flatMap((link) => [
      `list${link}s`,
      `link${link}`,
      `unlink${link}`,
    ]),
    'listVendorUseCases',
    'listVendorModels',
  ],
  workflow: [
    ...crud('WorkflowStage'),
    'getUseCaseWorkflow',
    'setUseCaseWorkflowStage',
    'advanceUseCaseWorkflow',
    'rejectUseCaseWorkflow',
  ],
  policy: [
    'listPolicyControlBases',
    'getPolicyControlBase',
    'createPolicyControlBase',
    'updatePolicyControlBase',
    'listPolicyControlVersions',
    'getPolicyControlVersion',
    'createPolicyControlVersion',
    'updatePolicyControlVersion',
    'publishPolicyControlVersion',
    'listPolicyControls',
    'getPolicyControl',
    'listPolicyPacks',
    'getPolicyPack',
    'createPolicyPack',
    'listUseCasePolicyPacks',
    'getUseCasePolicyPack',
    'applyPolicyPack',
    'removePolicyPack',
    'listUseCaseControls',
    'listTenantControls',
    'getUseCaseControl',
    'updateUseCaseControl',
    'listQuestionnaires',
    'getQuestionnaire',
    'createQuestionnaire',
    'listUseCaseQuestionnaires',
    'getUseCaseQuestionnaire',
    'attachUseCaseQuestionnaire',
    'detachUseCaseQuestionnaire',
    'listModelQuestionnaires',
    'getModelQuestionnaire',
    'attachModelQuestionnaire',
    'detachModelQuestionnaire',
  ],
  audit: ['listAuditLogs', 'getAuditLog', 'queryAuditLogs', 'exportAuditLogs', 'verifyAuditLogs'],
  people: [
    ...['User', 'Team', 'CustomField'].flatMap((family) => crud(family)),
    'listTeamMembers',
    'addTeamMember',
    'removeTeamMember',
  ],
}

interface Operation {
  operationId: string
  summary?: string
  tags?: string[]
  security?: unknown
  requestBody?: { content: Record<string, { example?: unknown; schema: { examples?: unknown } }> }
  responses: Record<string, unknown>
}

describe('OpenAPI document', () => {
  let t: TestApp
  let doc: any
  const operations = new Map<string, Operation & { method: string; path: string }>()
  beforeAll(async () => {
    t = await startTestApp('sqlite')
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    for (const [path, item] of Object.entries<Record<string, Operation>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) operations.set(op.operationId, { ...op, method, path })
    }
  })
  afterAll(async () => t.close())

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0')
    const result = await new Validator().validate(doc)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it('passes the Redocly lint of the recommended ruleset with no errors', async () => {
    const source = (
      await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'governance.acme.test' } })
    ).body
    const problems = await lintFromString({
      source,
      absoluteRef: 'openapi.json',
      config: await createConfig({ extends: ['recommended'] }),
    })
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)
    expect(errors).toEqual([])
    // Warnings allowed: the list-query shapes are published for generators, while their fields stay plain query parameters.
    const warnings = new Set(problems.filter((p) => p.severity === 'warn').map((p) => p.ruleId))
    expect([...warnings]).toEqual(warnings.size ? ['no-unused-components'] : [])
  })

  it('publishes each record, body, page, query and problem once as a named component, and refers to it', () => {
    const schemas = doc.components.schemas
    for (const name of [
      'UseCase',
      'UseCaseCreate',
      'UseCaseUpdate',
      'UseCasePage',
      'UseCaseListQuery',
      'Problem',
      'Pagination',
      'Model',
      'ModelPage',
      'Vendor',
      'WorkflowStage',
      'UseCaseWorkflow',
      'WorkflowStageRef',
      'AuditLog',
      'TokenRequest',
      'ApiKeyPage',
      'RiskCategoryLevel',
    ]) {
      expect(schemas[name], name).toBeDefined()
    }
    const json = (id: string, status: string) =>
      operations.get(id)!.responses[status] as { content: Record<string, { schema: unknown }> }
    expect(operations.get('createUseCase')!.requestBody!.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/UseCaseCreate',
    })
    expect(json('createUseCase', '201').content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/UseCase',
    })
    expect(json('listUseCases', '200').content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/UseCasePage',
    })
    expect(schemas.UseCasePage.properties).toEqual({
      items: { type: 'array', items: { $ref: '#/components/schemas/UseCase' } },
      pagination: { $ref: '#/components/schemas/Pagination' },
    })
    // Every JSON body and success answer (not the streamed exports) and every problem is a reference, never an inline copy.
    for (const [id, op] of operations) {
      const body = op.requestBody?.content['application/json']?.schema as { $ref?: string } | undefined
      if (body) expect(body.$ref, id).toMatch(/^#\/components\/schemas\//)
      for (const [status, response] of Object.entries(
        op.responses as Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>,
      )) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (type === 'application/problem+json')
            expect(media.schema, `${id} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' })
          else if (type === 'application/json')
            expect(media.schema.$ref, `${id} ${status}`).toMatch(/^#\/components\/schemas\//)
        }
      }
    }
    // Every reference resolves.
    expect(() => dereference(doc)).not.toThrow()
    const size = JSON.stringify(doc).length
    console.log(`openapi.json: ${size} bytes, ${Object.keys(schemas).length} component schemas`)
    // Grows with the families (configuration as code added 26 KB); a jump means inline copies instead of references.
    expect(size).toBeLessThan(540_000)
  })

  it('names its servers after the address the request reached, and falls back to "/" for an odd Host', async () => {
    const served = async (headers: Record<string, string>) =>
      (await t.app.inject({ method: 'GET', url: '/openapi.json', headers })).json().servers
    expect(await served({ host: 'governance.acme.test:8443' })).toEqual([{ url: 'http://governance.acme.test:8443' }])
    expect(await served({ host: 'governance.acme.test', 'x-forwarded-proto': 'https' })).toEqual([
      { url: 'https://governance.acme.test' },
    ])
    expect(await served({ host: '[::1]:8080' })).toEqual([{ url: 'http://[::1]:8080' }])
    expect(await served({ host: 'evil.test/"><script>' })).toEqual([{ url: '/' }])
    expect(await served({ host: 'a.test', 'x-forwarded-proto': 'javascript' })).toEqual([{ url: 'http://a.test' }])
  })

  it('describes the token exchange: API-key header schemes, an optional body, no duplicate header parameters', () => {
    expect(doc.components.securitySchemes).toMatchObject({
      apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      tenantHeader: { type: 'apiKey', in: 'header', name: 'X-Tenant' },
    })
    const token = operations.get('createToken')! as Operation & {
      parameters?: { name: string }[]
      requestBody?: { required?: boolean }
    }
    expect(token.security).toEqual([{ apiKeyHeader: [], tenantHeader: [] }, {}])
    expect(token.requestBody?.required).toBe(false)
    expect((token.parameters ?? []).map((p) => p.name.toLowerCase())).not.toContain('x-api-key')
  })

  it('gives the MCP tools the same schemas as the components, inlined (a tool schema cannot refer into the document)', () => {
    const component = (name: string) =>
      dereference({ components: doc.components, paths: { schema: doc.components.schemas[name] } }).paths.schema as {
        properties: Record<string, unknown>
      }
    // The document writes a single allowed value as `enum: [v]`, a tool schema as `const: v`: the same constraint.
    const tool = (name: string) =>
      JSON.parse(JSON.stringify(TOOLS.find((t) => t.name === name)!.input), (_key, value) =>
        value && typeof value === 'object' && 'const' in value
          ? (({ const: c, ...rest }) => ({ ...rest, enum: [c] }))(value)
          : value,
      ) as { properties: Record<string, unknown> }
    for (const [name, schema] of [
      ['create_use_case', 'UseCaseCreate'],
      ['update_model', 'ModelUpdate'],
      ['list_vendors', 'VendorListQuery'],
      ['query_audit_logs', 'AuditLogQuery'],
    ]) {
      const properties = tool(name).properties
      for (const [field, fieldSchema] of Object.entries(component(schema).properties))
        expect(properties[field], `${name}.${field}`).toEqual(fieldSchema)
    }
  })

  it('has top-level tags with descriptions for every tag an operation uses, and a license', () => {
    const declared = new Map<string, string>(
      doc.tags.map((tag: { name: string; description: string }) => [tag.name, tag.description]),
    )
    for (const [id, op] of operations)
      for (const tag of op.tags ?? []) expect(declared.get(tag), `${id}: ${tag}`).toBeTruthy()
    expect(doc.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' })
  })

  it.each(Object.entries(OPERATIONS))('names every %s operation', (_family, ids) => {
    for (const id of ids) expect(operations.has(id), id).toBe(true)
  })

  it('describes every route with a unique operationId, summary, tag, success response and its errors', () => {
    let count = 0
    for (const [path, item] of Object.entries<Record<string, Operation>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`
        count++
        expect(op.operationId, where).toBeTruthy()
        expect(op.summary, where).toBeTruthy()
        expect(op.tags?.length, where).toBeGreaterThan(0)
        const statuses = Object.keys(op.responses)
        expect(
          statuses.some((s) => s.startsWith('2')),
          where,
        ).toBe(true)
        expect(statuses, where).toContain('500')
        if (path.startsWith('/api/v1/integration') && !path.endsWith('/auth/token')) {
          expect(statuses, where).toEqual(expect.arrayContaining(['401', '403', '429']))
          expect(op.security ?? doc.security, where).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }])
        }
        if (op.requestBody) expect(statuses, where).toEqual(expect.arrayContaining(['413', '422']))
      }
    }
    expect(operations.size).toBe(count)
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  it('gives create and link bodies an example', () => {
    for (const [id, op] of operations) {
      if (!/^(create|link|apply|attach)/.test(id) || !op.requestBody) continue
      const media = op.requestBody.content['application/json']
      expect(media.example ?? media.schema.examples, id).toBeDefined()
    }
    const media = operations.get('createUseCase')!.requestBody!.content['application/json']
    expect(media.example).toMatchObject({ name: 'Credit scoring' })
  })

  it('declares 409 on workflow transitions', () => {
    for (const id of ['setUseCaseWorkflowStage', 'advanceUseCaseWorkflow', 'rejectUseCaseWorkflow']) {
      expect(operations.get(id)!.responses['409'], id).toBeDefined()
    }
  })

  it('serves an interactive reference page at /docs', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/docs' })).headers.location).toBe('/docs/')
    const res = await t.app.inject({ method: 'GET', url: '/docs/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/html')
    expect(res.body).toContain('/openapi.json')
  })
})
