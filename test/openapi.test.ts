import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './helpers/harness.js'

const crud = (family: string, plural = `${family}s`) => [`list${plural}`, `get${family}`, `create${family}`, `update${family}`, `delete${family}`]

/** Every operation the contract promises, by family: a route that disappears or is renamed fails here. */
const OPERATIONS = {
  auth: ['createToken', 'listApiKeys', 'getApiKey', 'createApiKey', 'revokeApiKey'],
  health: ['getLiveness', 'getReadiness', 'getSystem', 'ping', 'getGovernanceSummary'],
  useCases: crud('UseCase'),
  catalog: [
    ...['Model', 'Vendor', 'RiskType', 'RiskScenario'].flatMap((family) => crud(family)),
    ...['UseCaseModel', 'UseCaseVendor', 'UseCaseRiskScenario', 'ModelVendor'].flatMap((link) => [`list${link}s`, `link${link}`, `unlink${link}`]),
    'listVendorUseCases', 'listVendorModels',
  ],
  workflow: [...crud('WorkflowStage'), 'getUseCaseWorkflow', 'setUseCaseWorkflowStage', 'advanceUseCaseWorkflow', 'rejectUseCaseWorkflow'],
  policy: [
    'listPolicyControlBases', 'getPolicyControlBase', 'createPolicyControlBase', 'updatePolicyControlBase',
    'listPolicyControlVersions', 'getPolicyControlVersion', 'createPolicyControlVersion', 'updatePolicyControlVersion', 'publishPolicyControlVersion',
    'listPolicyControls', 'getPolicyControl', 'listPolicyPacks', 'getPolicyPack', 'createPolicyPack',
    'listUseCasePolicyPacks', 'getUseCasePolicyPack', 'applyPolicyPack', 'removePolicyPack', 'listUseCaseControls', 'getUseCaseControl', 'updateUseCaseControl',
    'listQuestionnaires', 'getQuestionnaire', 'createQuestionnaire',
    'listUseCaseQuestionnaires', 'getUseCaseQuestionnaire', 'attachUseCaseQuestionnaire', 'detachUseCaseQuestionnaire',
    'listModelQuestionnaires', 'getModelQuestionnaire', 'attachModelQuestionnaire', 'detachModelQuestionnaire',
  ],
  audit: ['listAuditLogs', 'getAuditLog', 'queryAuditLogs', 'exportAuditLogs', 'verifyAuditLogs'],
  people: [...['User', 'Team', 'CustomField'].flatMap((family) => crud(family)), 'listTeamMembers', 'addTeamMember', 'removeTeamMember'],
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
        expect(statuses.some((s) => s.startsWith('2')), where).toBe(true)
        expect(statuses, where).toContain('500')
        if (path.startsWith('/api/v1/integration') && !path.endsWith('/auth/token')) {
          expect(statuses, where).toEqual(expect.arrayContaining(['401', '403', '429']))
          expect(op.security ?? doc.security, where).toEqual([{ bearerAuth: [] }])
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
