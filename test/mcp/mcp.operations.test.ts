import { OPERATIONS } from '@aigov/client'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpShape } from '../../src/mcp/client-backend.js'
import { type HttpCall, type OperationTool, TOOL_TABLE } from '../../src/mcp/tools.js'
import { startTestApp, type TestApp } from '../helpers/harness.js'
import { dereference } from '../helpers/openapi.js'

interface Route {
  method: string
  path: string
  parameters?: { name: string; in: string }[]
  requestBody?: { required?: boolean; content: Record<string, { schema: { properties?: Record<string, unknown> } }> }
}

/** What is wrong with a tool's route declaration against the OpenAPI document: empty when it matches. */
function mismatches(routes: Map<string, Route>, name: string, tool: Pick<OperationTool, 'http' | 'input'>): string[] {
  const found: string[] = []
  const { http, input } = tool
  const known = Object.keys(OPERATIONS)
  const ids = typeof http.operationId === 'string' ? [http.operationId] : Object.values(http.operationId.ids)
  const missing = ids.filter((id) => !routes.has(id) || !known.includes(id))
  if (missing.length > 0) return [`${name}: no operation ${missing.join(', ')} in /openapi.json`]
  if (typeof http.operationId !== 'string') {
    const values = (input.properties[http.operationId.by] as { enum?: string[] }).enum ?? []
    if (Object.keys(http.operationId.ids).sort().join() !== [...values].sort().join())
      found.push(`${name}: one operation per value of ${http.operationId.by} (${values.join(', ')})`)
  }
  const shape = httpShape(http as HttpCall, input)
  const rename = (arg: string) => (http.rename as Record<string, string> | undefined)?.[arg] ?? arg
  for (const id of ids) {
    const route = routes.get(id)!
    const templated = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])
    const declared = (route.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name)
    if (shape.path.join() !== templated.join() || [...declared].sort().join() !== [...templated].sort().join())
      found.push(`${name}: path [${shape.path}] but ${id} is ${route.path}`)
    for (const arg of shape.path)
      if (!(input.required ?? []).includes(arg)) found.push(`${name}: path argument ${arg} is optional`)
    if (route.method !== OPERATIONS[id as keyof typeof OPERATIONS].method.toLowerCase())
      found.push(`${name}: ${id} is ${route.method} in the document, not as the client calls it`)
    const queries = (route.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
    for (const arg of shape.query)
      if (!queries.includes(rename(arg))) found.push(`${name}: ${id} has no query parameter ${rename(arg)}`)
    const body = route.requestBody?.content['application/json']?.schema
    if ((shape.fields || shape.body) && !body) found.push(`${name}: ${id} takes no JSON body`)
    for (const arg of shape.fields ?? [])
      if (!(rename(arg) in (body?.properties ?? {}))) found.push(`${name}: ${id}'s body has no field ${rename(arg)}`)
    if (!shape.fields && !shape.body && route.requestBody?.required) found.push(`${name}: ${id} needs a body`)
  }
  return found
}

describe('MCP tools and their HTTP operations', () => {
  let t: TestApp
  const routes = new Map<string, Route>()
  beforeAll(async () => {
    t = await startTestApp('sqlite')
    const doc = dereference((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json())
    for (const [path, item] of Object.entries<Record<string, Route & { operationId: string }>>(doc.paths))
      for (const [method, op] of Object.entries(item)) routes.set(op.operationId, { ...op, method, path })
  })
  afterAll(async () => t?.close())

  it("maps every tool onto an operation of the document, with the route's path parameters, query and body", () => {
    const tools = Object.entries(TOOL_TABLE).flatMap(([name, tool]) =>
      'http' in tool ? [[name, tool as unknown as OperationTool] as const] : [],
    )
    expect(tools.length).toBeGreaterThan(50)
    expect(tools.flatMap(([name, tool]) => mismatches(routes, name, tool))).toEqual([])
  })

  it('reports an unknown operationId, path parameters out of order or missing, and arguments the route lacks', () => {
    const input = Type.Object({ id: Type.String(), model_id: Type.String(), page_limit: Type.Optional(Type.Number()) })
    const check = (http: HttpCall) => mismatches(routes, 'tool', { http, input })
    expect(check({ operationId: 'unlinkUseCaseModel', path: ['id', 'model_id'], local: ['page_limit'] })).toEqual([])
    expect(check({ operationId: 'unlinkUseCaseModels' as never, path: ['id', 'model_id'] })).toEqual([
      'tool: no operation unlinkUseCaseModels in /openapi.json',
    ])
    expect(check({ operationId: 'unlinkUseCaseModel', path: ['model_id', 'id'], local: ['page_limit'] })).toEqual([
      'tool: path [model_id,id] but unlinkUseCaseModel is /api/v1/integration/use_cases/{id}/models/{model_id}',
    ])
    expect(check({ operationId: 'listUseCaseModels', local: ['model_id'] })).toEqual([
      'tool: path [] but listUseCaseModels is /api/v1/integration/use_cases/{id}/models',
      'tool: listUseCaseModels has no query parameter id',
    ])
    expect(check({ operationId: 'linkUseCaseModel', path: ['id'], local: ['page_limit'] })).toEqual([
      "tool: linkUseCaseModel's body has no field model_id",
    ])
    expect(check({ operationId: 'linkUseCaseModel', path: ['id'], rename: { model_id: 'id' } })).toEqual([
      "tool: linkUseCaseModel's body has no field page_limit",
    ])
  })
})
