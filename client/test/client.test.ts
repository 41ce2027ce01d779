import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../src/index.js'
import { countingFetch, startService, type TestService } from './service.js'

let service: TestService

beforeAll(async () => {
  service = await startService()
})
afterAll(async () => {
  await service?.stop()
})

const clientFor = (extra: Parameters<typeof createClient>[0] = {}) =>
  createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, tenant: service.tenant, ...extra })

describe('client against a real service', () => {
  it('exchanges lazily, then creates, reads, updates and deletes a use case in camelCase', async () => {
    const counter = countingFetch()
    const client = clientFor({ fetch: counter.fetch })
    expect(counter.calls).toHaveLength(0)

    const created = await client.useCases.create({ name: 'Credit scoring', riskCategoryLevel: 'high', regions: ['EU'] })
    expect(created.error).toBeNull()
    expect(created.data).toMatchObject({ name: 'Credit scoring', riskCategoryLevel: 'high', regions: ['EU'], workflowStageId: expect.any(String) })
    expect(created.data!.id).toMatch(/^uc_/)
    expect(counter.exchanges()).toBe(1)
    const create = counter.calls.find((c) => c.method === 'POST' && c.path.endsWith('/use_cases'))!
    expect(create.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/)

    const id = created.data!.id
    const got = await client.useCases.get(id)
    expect(got.data?.createdAt).toBe(created.data!.createdAt)

    const updated = await client.useCases.update(id, { aiType: 'machine_learning', owner: null })
    expect(updated.data).toMatchObject({ aiType: 'machine_learning', owner: null })

    const listed = await client.useCases.list({ q: 'credit', riskCategoryLevel: 'high', pageLimit: 10 })
    expect(listed.data?.items.map((u) => u.id)).toEqual([id])
    expect(listed.data?.pagination).toEqual({ hasMore: false, nextCursor: null })

    const deleted = await client.useCases.delete(id)
    expect(deleted).toEqual({ data: null, error: null })
    const gone = await client.useCases.get(id)
    expect(gone.data).toBeNull()
    expect(gone.error).toMatchObject({ kind: 'not_found', status: 404, requestId: expect.any(String) })
    expect(gone.error!.details).toMatchObject({ code: 'not_found', requestId: gone.error!.requestId })
    expect(counter.exchanges()).toBe(1)
  })
})
