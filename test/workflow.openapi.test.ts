import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from './helpers/harness.js'

const OPERATIONS = {
  listWorkflowStages: ['get', '/api/v1/integration/workflow_stages'],
  createWorkflowStage: ['post', '/api/v1/integration/workflow_stages'],
  getWorkflowStage: ['get', '/api/v1/integration/workflow_stages/{id}'],
  updateWorkflowStage: ['patch', '/api/v1/integration/workflow_stages/{id}'],
  deleteWorkflowStage: ['delete', '/api/v1/integration/workflow_stages/{id}'],
  getUseCaseWorkflow: ['get', '/api/v1/integration/use_cases/{id}/workflow'],
  setUseCaseWorkflowStage: ['put', '/api/v1/integration/use_cases/{id}/workflow'],
  advanceUseCaseWorkflow: ['post', '/api/v1/integration/use_cases/{id}/workflow/advance'],
  rejectUseCaseWorkflow: ['post', '/api/v1/integration/use_cases/{id}/workflow/reject'],
  getSystem: ['get', '/api/v1/integration/system'],
  ping: ['get', '/api/v1/integration/system/ping'],
} as const

describeEachDialect('workflow and system: OpenAPI', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  it('documents each operation with its operationId, summary, tag, examples and 409 where transitions can conflict', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const result = await new Validator().validate(doc)
    expect(result.errors ?? []).toEqual([])
    for (const [operationId, [method, path]] of Object.entries(OPERATIONS)) {
      const op = doc.paths[path]?.[method]
      expect(op, `${method} ${path}`).toBeDefined()
      expect(op.operationId).toBe(operationId)
      expect(op.summary).toBeTruthy()
      expect(op.tags.length).toBe(1)
      expect(op.responses['200'] ?? op.responses['201'] ?? op.responses['204']).toBeDefined()
    }
    for (const path of ['/workflow/advance', '/workflow/reject', '/workflow']) {
      const ops = doc.paths[`/api/v1/integration/use_cases/{id}${path}`]
      for (const op of Object.values(ops) as { operationId: string; responses: Record<string, unknown> }[]) {
        if (op.operationId !== 'getUseCaseWorkflow') expect(op.responses['409'], op.operationId).toBeDefined()
      }
    }
    const body = doc.paths['/api/v1/integration/workflow_stages'].post.requestBody.content['application/json'].schema
    expect(JSON.stringify(body)).toContain('examples')
  })
})
