import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { camelize, ClientRequestError, createClient } from '../src/index.js'
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
    expect(created.data).toMatchObject({
      name: 'Credit scoring',
      riskCategoryLevel: 'high',
      regions: ['EU'],
      workflowStageId: expect.any(String),
    })
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

  it('maps error statuses to kinds: validation (422, 400), already_exists (422 with its code) and conflict (409), with the problem body', async () => {
    const client = clientFor()
    const missing = await client.useCases.create({ description: 'no name' } as never)
    expect(missing.error).toMatchObject({ kind: 'validation', status: 422, details: { code: 'validation_failed' } })
    expect(missing.error!.details!.errors?.[0]).toMatchObject({ field: expect.any(String) })
    // `body` is the problem document as the service sent it (as the original client's error.body); `details` its camelCase view.
    expect(missing.error!.body).toMatchObject({
      status: 422,
      code: 'validation_failed',
      request_id: missing.error!.requestId,
      errors: [{ field: expect.any(String) }],
    })
    expect(missing.error!.details).toEqual(camelize(missing.error!.body))

    const badCursor = await client.useCases.list({ pageAfter: '%%%' })
    expect(badCursor.error).toMatchObject({ kind: 'validation', status: 400 })

    const first = await client.vendors.create({ name: 'Dup vendor' })
    const dup = await client.vendors.create({ name: 'dup VENDOR' })
    expect(dup.error).toMatchObject({
      kind: 'already_exists',
      status: 422,
      existingId: first.data!.id,
      details: { existingId: first.data!.id },
    })

    const uc = await client.useCases.create({ name: 'Conflict kind' })
    for (let i = 0; i < 3; i++) await client.useCases.workflow.advance(uc.data!.id)
    const pastEnd = await client.useCases.workflow.advance(uc.data!.id)
    expect(pastEnd.error).toMatchObject({ kind: 'conflict', status: 409, message: expect.any(String) })
  })

  it('addresses a questionnaire as KEY+version over the wire (sent as %2B), as the original SDK does', async () => {
    const client = clientFor()
    const sections = [
      { title: 'Purpose', questions: [{ question: 'What does it decide?', evidenceType: 'text' as const }] },
    ]
    const created = await client.questionnaires.create({
      key: 'SDK-INTAKE',
      name: 'SDK intake',
      target: 'use_case',
      sections,
    })
    expect(created.error).toBeNull()
    // Ids the body left out are assigned and returned.
    expect(created.data!.sections[0]).toMatchObject({ id: 'purpose', questions: [{ id: 'what-does-it-decide' }] })
    expect((await client.questionnaires.get('SDK-INTAKE+1')).data).toMatchObject({ key: 'SDK-INTAKE', version: 1 })
    const uc = (await client.useCases.create({ name: 'SDK attach' })).data!
    expect((await client.useCases.questionnaires.attach(uc.id, { key: 'SDK-INTAKE+1' })).data).toMatchObject({
      questionnaireId: 'SDK-INTAKE+1',
    })
    expect(
      (
        await client.useCases.questionnaires.answer(uc.id, 'SDK-INTAKE+1', {
          answers: [{ questionId: 'what-does-it-decide', value: 'Nothing yet.' }],
        })
      ).error,
    ).toBeNull()
    expect((await client.useCases.questionnaires.detach(uc.id, 'SDK-INTAKE+1')).error).toBeNull()
  })

  it('keeps free-form maps (audit changes and metadata) as the service wrote them', async () => {
    const client = clientFor()
    const uc = await client.useCases.create({ name: 'Audit mapping' })
    await client.useCases.update(uc.data!.id, { riskCategoryLevel: 'low' })
    const page = await client.auditLogs.list({ resourceId: uc.data!.id, action: ['use_case.updated'] })
    expect(page.error).toBeNull()
    const [record] = page.data!.items
    expect(record).toMatchObject({
      action: 'use_case.updated',
      resourceType: 'use_case',
      useCaseId: uc.data!.id,
      actor: { type: 'api_key' },
    })
    expect(record.changes).toEqual({ risk_category_level: [null, 'low'] })

    const issued = await client.auditLogs.query({ action: ['auth.token_issued'], pageLimit: 1 })
    expect(Object.keys(issued.data!.items[0].metadata!)).toContain('expires_in')

    const one = await client.auditLogs.get(record.id)
    expect(one.data?.requestId).toBe(record.requestId)
    const exported = await client.auditLogs.export({ format: 'ndjson', resourceId: uc.data!.id })
    expect(exported.error).toBeNull()
    expect(
      exported
        .data!.trim()
        .split('\n')
        .map((line) => JSON.parse(line).action),
    ).toEqual(['use_case.created', 'use_case.updated'])
    const verified = await client.auditLogs.verify()
    expect(verified.data).toMatchObject({ ok: true, firstBadId: null })
  })

  it('exports, plans and applies configuration documents with the wire keys the service reads back', async () => {
    const client = clientFor()
    const exported = await client.configuration.export()
    expect(exported.error).toBeNull()
    expect(exported.data).toHaveProperty('apiVersion', 'aigov/v1')
    expect(Object.keys(exported.data!)).toContain('workflow_stages')
    const schema = await client.configuration.schema()
    expect(Object.keys((schema.data as { properties: object }).properties)).toContain('risk_scenarios')
    // The export planned against its own tenant changes nothing.
    const same = await client.configuration.plan(exported.data!)
    expect(same.error).toBeNull()
    expect(same.data!.summary).toMatchObject({ create: 0, update: 0, delete: 0 })
    const document = {
      ...exported.data!,
      risk_types: [...(exported.data!.risk_types ?? []), { name: 'Client-planned risk' }],
    }
    const plan = await client.configuration.plan(document)
    expect(plan.data!.changes).toContainEqual(
      expect.objectContaining({ section: 'risk_types', key: 'Client-planned risk', action: 'create' }),
    )
    const applied = await client.configuration.apply(document, { planId: plan.data!.plan_id })
    expect(applied.error).toBeNull()
    expect(applied.data!.applied).toBe(1)
    const stale = await client.configuration.apply(document, { planId: plan.data!.plan_id })
    expect(stale.error?.kind).toBe('conflict')
    expect((await client.configuration.export()).data!.risk_types!.map((r) => r.name)).toContain('Client-planned risk')
  })

  it('walks 250 records with listAll, page by page, without skipping or repeating', async () => {
    const client = clientFor()
    const names = Array.from({ length: 250 }, (_, i) => `Walk model ${String(i).padStart(3, '0')}`)
    for (let i = 0; i < names.length; i += 25) {
      const batch = await Promise.all(
        names.slice(i, i + 25).map((name) => client.models.create({ name, status: 'in_production' })),
      )
      expect(batch.every((r) => r.error === null)).toBe(true)
    }
    const counter = countingFetch()
    const walker = clientFor({ fetch: counter.fetch })
    const seen: string[] = []
    for await (const model of walker.models.listAll({ q: 'walk model', pageLimit: 100, sort: 'name' }))
      seen.push(model.name)
    expect(seen).toEqual(names)
    expect(counter.calls.filter((c) => c.path.endsWith('/models'))).toHaveLength(3)

    const audit: string[] = []
    for await (const record of walker.auditLogs.queryAll({ action: ['model.created'], pageLimit: 100 }))
      audit.push(record.resourceName!)
    expect(new Set(audit)).toEqual(new Set(names))
  })

  it("listAll throws a ClientRequestError carrying the failed page's error", async () => {
    const client = clientFor()
    const walk = async () => {
      for await (const _ of client.useCases.models.listAll('uc_00000000000000000000000000')) void _
    }
    const thrown = await walk().catch((err: unknown) => err)
    expect(thrown).toBeInstanceOf(ClientRequestError)
    expect((thrown as ClientRequestError).error).toMatchObject({ kind: 'not_found', status: 404 })
  })

  it('links, applies and moves through sub-resource namespaces', async () => {
    const client = clientFor()
    const uc = (await client.useCases.create({ name: 'Links' })).data!
    const model = (await client.models.create({ name: 'Linked model' })).data!
    const vendor = (await client.vendors.create({ name: 'Linked vendor' })).data!
    expect((await client.useCases.models.link(uc.id, model.id)).data?.id).toBe(model.id)
    expect((await client.models.vendors.link(model.id, vendor.id)).data?.id).toBe(vendor.id)
    expect((await client.useCases.models.list(uc.id)).data?.items.map((m) => m.id)).toEqual([model.id])
    expect((await client.vendors.models.list(vendor.id)).data?.items.map((m) => m.id)).toEqual([model.id])
    expect((await client.useCases.models.unlink(uc.id, model.id)).error).toBeNull()

    const before = (await client.useCases.workflow.get(uc.id)).data!
    expect(before.workflowStageStep).toBe('assessment')
    expect(before.workflowStage).toMatchObject({ type: 'start', position: 0 })
    const advanced = await client.useCases.workflow.advance(uc.id)
    expect(advanced.data?.workflowStageStep).toBe('evidence_collection')
    const rejected = await client.useCases.workflow.reject(uc.id, 'no legal basis')
    expect(rejected.data?.workflowStageStep).toBe('rejected')

    const stages = (await client.workflowStages.list()).data!.items
    const moved = await client.useCases.workflow.set(uc.id, stages[0].id)
    expect(moved.error).toBeNull()
  })

  it('100 concurrent calls share exactly one token exchange', async () => {
    const counter = countingFetch()
    const client = clientFor({ fetch: counter.fetch })
    const admin = clientFor()
    const tokensIssued = async () => {
      let n = 0
      for await (const _ of admin.auditLogs.queryAll({ action: ['auth.token_issued'] })) n++
      return n
    }
    const issuedBefore = await tokensIssued()

    const results = await Promise.all(Array.from({ length: 100 }, () => client.system.ping()))
    expect(results.every((r) => r.error === null && r.data?.message === 'pong')).toBe(true)
    expect(counter.exchanges()).toBe(1)
    expect((await tokensIssued()) - issuedBefore).toBe(1)
  })

  it('on a 401 refreshes the token once and retries once', async () => {
    const counter = countingFetch()
    let spoiled = 0
    // The service refuses the first bearer call as if the token had been revoked meanwhile.
    const spoiling: typeof fetch = (input, init) => {
      const headers = { ...(init?.headers as Record<string, string>) }
      if (headers.authorization && spoiled++ === 0) headers.authorization = 'Bearer not-a-valid-token'
      return counter.fetch(input, { ...init, headers })
    }
    const client = clientFor({ fetch: spoiling })
    const ping = await client.system.ping()
    expect(ping.error).toBeNull()
    expect(counter.exchanges()).toBe(2)
    expect(counter.calls.filter((c) => c.path.endsWith('/system/ping'))).toHaveLength(2)

    const always401: typeof fetch = (input, init) =>
      counter.fetch(input, {
        ...init,
        headers: {
          ...(init?.headers as Record<string, string>),
          ...((init?.headers as Record<string, string> | undefined)?.authorization
            ? { authorization: 'Bearer bad' }
            : {}),
        },
      })
    const stubborn = clientFor({ fetch: always401 })
    const refused = await stubborn.system.ping()
    expect(refused.error).toMatchObject({ kind: 'authentication', status: 401 })
  })

  it('uses a supplied accessToken as is, without any exchange', async () => {
    const token = (await clientFor().auth.token()).data!
    expect(token).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600, accessToken: expect.any(String) })
    const counter = countingFetch()
    const client = createClient({ baseUrl: service.baseUrl, accessToken: token.accessToken, fetch: counter.fetch })
    expect((await client.system.get()).data).toMatchObject({
      tenant: service.tenant,
      apiVersion: expect.any(String),
      features: { mcpReadOnly: false },
    })
    expect(counter.exchanges()).toBe(0)

    const wrongKey = createClient({ baseUrl: service.baseUrl, apiKey: 'sk_wrong', tenant: service.tenant })
    expect((await wrongKey.system.ping()).error).toMatchObject({ kind: 'authentication', status: 401 })
    const noKey = createClient({ baseUrl: service.baseUrl, apiKey: '', tenant: '' })
    expect((await noKey.system.ping()).error).toMatchObject({ kind: 'authentication' })
  })

  it('falls back to SERVICE_API_URL, SERVICE_API_KEY and SERVICE_TENANT', async () => {
    const saved = { ...process.env }
    Object.assign(process.env, {
      SERVICE_API_URL: service.baseUrl,
      SERVICE_API_KEY: service.apiKey,
      SERVICE_TENANT: service.tenant,
    })
    try {
      const client = createClient()
      expect((await client.system.ping()).data).toMatchObject({ message: 'pong', tenant: service.tenant })
    } finally {
      for (const name of ['SERVICE_API_URL', 'SERVICE_API_KEY', 'SERVICE_TENANT']) {
        if (saved[name] === undefined) delete process.env[name]
        else process.env[name] = saved[name]
      }
    }
    expect(() => createClient({ baseUrl: '' })).toThrow(/baseUrl/)
  })

  it('answers the health checks without credentials', async () => {
    const client = createClient({ baseUrl: service.baseUrl })
    expect(await client.health.live()).toEqual({ data: { message: true }, error: null })
    expect((await client.health.ready()).data).toMatchObject({ message: true })
  })
})
