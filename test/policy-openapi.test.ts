import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './helpers/harness.js'

const POLICY_OPERATIONS = [
  'listPolicyControlBases', 'getPolicyControlBase', 'createPolicyControlBase', 'updatePolicyControlBase',
  'listPolicyControlVersions', 'getPolicyControlVersion', 'createPolicyControlVersion', 'updatePolicyControlVersion', 'publishPolicyControlVersion',
  'listPolicyControls', 'getPolicyControl', 'listPolicyPacks', 'getPolicyPack', 'createPolicyPack',
  'listUseCasePolicyPacks', 'getUseCasePolicyPack', 'applyPolicyPack', 'removePolicyPack', 'listUseCaseControls', 'getUseCaseControl', 'updateUseCaseControl',
  'listQuestionnaires', 'getQuestionnaire', 'createQuestionnaire',
  'listUseCaseQuestionnaires', 'getUseCaseQuestionnaire', 'attachUseCaseQuestionnaire', 'detachUseCaseQuestionnaire',
  'listModelQuestionnaires', 'getModelQuestionnaire', 'attachModelQuestionnaire', 'detachModelQuestionnaire',
]

describe('policy library in the OpenAPI document', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp('sqlite')
  })
  afterAll(async () => t?.close())

  it('is a valid OpenAPI 3.1 document naming every policy operation with a summary, tags and examples on create bodies', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const result = await new Validator().validate(doc)
    expect(result.errors ?? []).toEqual([])
    const operations = new Map<string, { summary?: string; tags?: string[]; requestBody?: { content: Record<string, { example?: unknown }> } }>()
    for (const methods of Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>)) {
      for (const op of Object.values(methods)) operations.set(op.operationId, op)
    }
    for (const id of POLICY_OPERATIONS) {
      const op = operations.get(id)
      expect(op, id).toBeDefined()
      expect(op!.summary, id).toBeTruthy()
      expect(op!.tags?.length, id).toBeGreaterThan(0)
    }
    for (const id of ['createPolicyControlBase', 'createPolicyControlVersion', 'createPolicyPack', 'createQuestionnaire', 'applyPolicyPack', 'updateUseCaseControl', 'attachUseCaseQuestionnaire']) {
      expect(operations.get(id)!.requestBody!.content['application/json'].example, id).toBeDefined()
    }
  })
})
