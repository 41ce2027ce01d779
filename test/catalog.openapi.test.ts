import { Validator } from '@seriousme/openapi-schema-validator'
import { expect, it } from 'vitest'
import { startTestApp } from './helpers/harness.js'

const CATALOG_OPERATIONS = [
  ...['Model', 'Vendor', 'RiskType', 'RiskScenario'].flatMap((f) => [`list${f}s`, `get${f}`, `create${f}`, `update${f}`, `delete${f}`]),
  ...['UseCaseModel', 'UseCaseVendor', 'UseCaseRiskScenario', 'ModelVendor'].flatMap((l) => [`list${l}s`, `link${l}`, `unlink${l}`]),
  'listVendorUseCases', 'listVendorModels',
]

it('documents every catalog and relationship route (operationId, summary, tags, create examples) in a valid OpenAPI 3.1 document', async () => {
  const t = await startTestApp('sqlite')
  try {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    expect((await new Validator().validate(doc)).valid).toBe(true)
    const ops = new Map<string, { summary?: string; tags?: string[]; requestBody?: { content: Record<string, { example?: unknown; examples?: unknown }> } }>()
    for (const item of Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>)) {
      for (const op of Object.values(item)) ops.set(op.operationId, op)
    }
    for (const id of CATALOG_OPERATIONS) {
      const op = ops.get(id)
      expect(op, id).toBeDefined()
      expect(op?.summary, id).toBeTruthy()
      expect(op?.tags?.length, id).toBeGreaterThan(0)
      if (/^(create|link)/.test(id)) {
        const media = op?.requestBody?.content['application/json']
        expect(media?.example ?? media?.examples, id).toBeDefined()
      }
    }
  } finally {
    await t.close()
  }
})
