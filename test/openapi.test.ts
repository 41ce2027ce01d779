import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './helpers/harness.js'
import { describe } from 'vitest'

describe('OpenAPI document', () => {
  let t: TestApp
  let doc: any
  beforeAll(async () => {
    t = await startTestApp('sqlite')
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  })
  afterAll(async () => t.close())

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0')
    const result = await new Validator().validate(doc)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it('describes every route with an operationId, summary, responses and errors', () => {
    const operationIds = new Set<string>()
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const where = `${method.toUpperCase()} ${path}`
        expect(op.operationId, where).toBeTruthy()
        expect(operationIds.has(op.operationId), `${where} duplicate operationId`).toBe(false)
        operationIds.add(op.operationId)
        expect(op.summary, where).toBeTruthy()
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
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    for (const id of ['createToken', 'listUseCases', 'getUseCase', 'createUseCase', 'updateUseCase', 'deleteUseCase', 'listApiKeys', 'createApiKey', 'revokeApiKey', 'listAuditLogs', 'getAuditLog', 'getLiveness', 'getReadiness']) {
      expect(operationIds, id).toContain(id)
    }
  })

  it('gives request bodies examples', () => {
    const media = doc.paths['/api/v1/integration/use_cases'].post.requestBody.content['application/json']
    expect(media.example).toMatchObject({ name: 'Credit scoring' })
  })

  it('serves an interactive reference page at /docs', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/docs' })).headers.location).toBe('/docs/')
    const res = await t.app.inject({ method: 'GET', url: '/docs/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/html')
    expect(res.body).toContain('/openapi.json')
  })
})
