import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FREE_FORM_PROPERTIES } from '../src/case.js'
import { createClient } from '../src/index.js'
import { OPERATIONS } from '../src/operations.js'
import { countingFetch, startService, type TestService } from './service.js'

let service: TestService
let document: { paths: Record<string, Record<string, { operationId: string } & Record<string, unknown>>> }

beforeAll(async () => {
  service = await startService()
  document = await (await fetch(`${service.baseUrl}/openapi.json`)).json()
})
afterAll(async () => {
  await service?.stop()
})

type Route = { operationId: string; method: string; pattern: RegExp; params: number }

function routesOf(doc: typeof document): Route[] {
  const routes: Route[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const params = (path.match(/\{/g) ?? []).length
      const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`)
      routes.push({ operationId: operation.operationId, method: method.toUpperCase(), pattern, params })
    }
  }
  // Literal segments win over parameters, as in the server's router (/audit_logs/export before /audit_logs/{id}).
  return routes.sort((a, b) => a.params - b.params)
}

/** Every function of the client, by its dotted name. */
function methodsOf(node: Record<string, unknown>, prefix = ''): [string, (...args: unknown[]) => unknown][] {
  return Object.entries(node).flatMap(([name, value]) =>
    typeof value === 'function'
      ? [[prefix + name, value as (...args: unknown[]) => unknown] as [string, (...args: unknown[]) => unknown]]
      : methodsOf(value as Record<string, unknown>, `${prefix}${name}.`),
  )
}

describe('coverage of the OpenAPI document', () => {
  it('reaches every operationId of the running server through some client method', async () => {
    const routes = routesOf(document)
    const counter = countingFetch()
    const client = createClient({
      baseUrl: service.baseUrl,
      apiKey: service.apiKey,
      tenant: service.tenant,
      fetch: counter.fetch,
      maxRetries: 0,
    })
    const reached = new Map<string, string>()
    const silent: string[] = []
    for (const [name, method] of methodsOf(client).filter(([name]) => name !== 'invoke')) {
      const before = counter.calls.length
      // String objects serve as path segments (their text) and are ignored as query, body or options.
      const args = Array.from({ length: method.length }, (_, i) => new String(`p${i + 1}`))
      const result = method(...args)
      if (result && typeof (result as AsyncGenerator).next === 'function') {
        // An event stream waits for events that may never come: the request it sent is what counts here.
        await Promise.race([
          (result as AsyncGenerator).next().catch(() => undefined),
          new Promise((r) => setTimeout(r, 1000)),
        ])
      } else await result
      const made = counter.calls.slice(before).filter((c) => name === 'auth.token' || !c.path.endsWith('/auth/token'))
      if (made.length === 0) silent.push(name)
      for (const call of made) {
        const route = routes.find((r) => r.method === call.method && r.pattern.test(call.path))
        expect(route, `${name} sent ${call.method} ${call.path}, which no route of the document matches`).toBeDefined()
        reached.set(route!.operationId, name)
      }
    }
    expect(silent).toEqual([])
    const all = routes.map((r) => r.operationId).sort()
    expect(all.filter((id) => !reached.has(id))).toEqual([])
    expect(all).toEqual(Object.keys(OPERATIONS).sort())
  })

  it('also reaches any operation by its operationId through invoke()', async () => {
    const client = createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, tenant: service.tenant })
    const created = await client.invoke('createRiskType', [], { body: { name: 'Invoked', description: null } })
    expect(created.data).toMatchObject({ name: 'Invoked', custom: true })
    const got = await client.invoke('getRiskType', [created.data!.id])
    expect(got.data?.id).toBe(created.data!.id)
    await expect(client.invoke('noSuchOperation' as never, [])).rejects.toThrow(TypeError)
  })

  it('declares free-form maps only under properties the case mapping leaves alone', () => {
    const found = new Set<string>()
    const visit = (schema: unknown, property: string | null): void => {
      if (Array.isArray(schema)) {
        for (const s of schema) visit(s, property)
        return
      }
      if (!schema || typeof schema !== 'object') return
      const s = schema as Record<string, unknown>
      if (s.patternProperties || (s.additionalProperties !== undefined && s.additionalProperties !== false))
        found.add(property ?? '(top level)')
      for (const [key, value] of Object.entries(s)) {
        if (key === 'properties') for (const [name, sub] of Object.entries(value as object)) visit(sub, name)
        else visit(value, property)
      }
    }
    // The routes' schemas name most of theirs by $ref: the components are visited too.
    visit(document.paths, null)
    visit((document as { components?: unknown }).components, null)
    // Not through the case mapping: the configuration JSON Schema (a top-level map) is one of the documents the
    // client passes with the wire's keys, and a webhook event's `resource` is POSTed to receivers, not fetched.
    const elsewhere = new Set(['(top level)', 'resource'])
    expect([...found].filter((name) => !FREE_FORM_PROPERTIES.has(name) && !elsewhere.has(name))).toEqual([])
  })
})
