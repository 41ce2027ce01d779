import { type Client, type ClientError, camelize, OPERATIONS, type OperationId, snakify } from '@aigov/client'
import type { TObject } from 'typebox'
import { ProblemError } from './problem-error.js'
import { type GovernanceBackend, type HttpCall, type OperationName, type OperationTool, TOOL_TABLE } from './tools.js'

/** The problem codes of the client's error kinds that have no problem body (the service never answered). */
const CODE_OF_KIND: Record<string, string> = { timeout: 'unavailable', connection: 'unavailable' }

/** A client failure as the problem document a tool error carries: the service's own when it sent one. */
export function problemOf(error: ClientError): Record<string, unknown> {
  if (typeof error.body === 'object') return error.body as Record<string, unknown>
  return {
    code: CODE_OF_KIND[error.kind] ?? error.kind,
    ...(error.status ? { status: error.status } : {}),
    detail: error.message,
    ...(error.requestId ? { request_id: error.requestId } : {}),
  }
}

/** Where a tool's arguments go on its route (argument names; body fields are renamed on the way). */
export interface HttpShape {
  operationIds: OperationId[]
  path: string[]
  query: string[]
  /** Arguments sent as fields of a JSON body; absent when the route gets no body from them. */
  fields?: string[]
  /** The argument that is the whole body. */
  body?: string
}

/** The shape of a tool's requests, from its declaration and its input schema. */
export function httpShape(http: HttpCall, input: TObject): HttpShape {
  const operationIds = typeof http.operationId === 'string' ? [http.operationId] : Object.values(http.operationId.ids)
  const selector = typeof http.operationId === 'string' ? [] : [http.operationId.by]
  const path = http.path ?? []
  const query = http.query ?? []
  const placed = new Set([...selector, ...path, ...query, ...(http.local ?? []), ...(http.body ? [http.body] : [])])
  const rest = Object.keys(input.properties).filter((name) => !placed.has(name))
  const method = OPERATIONS[operationIds[0]].method
  if (method === 'GET' || method === 'DELETE') return { operationIds, path, query: [...query, ...rest] }
  return { operationIds, path, query, ...(rest.length > 0 && { fields: rest }), ...(http.body && { body: http.body }) }
}

/**
 * The tools' backend in stdio mode: the project's TypeScript client calling a running service, each tool's operation
 * by its operationId. Tools speak the wire's snake_case; the client's camelCase is converted at this edge, both ways,
 * except for operations whose documents keep the wire's keys (configuration documents and plans).
 */
export function clientBackend(client: Client): GovernanceBackend {
  const shapes = new Map<string, HttpShape>()
  const shapeOf = (name: OperationName, tool: OperationTool) => {
    let shape = shapes.get(name)
    if (!shape) shapes.set(name, (shape = httpShape(tool.http, tool.input)))
    return shape
  }

  return {
    call: async (name, args) => {
      const tool = TOOL_TABLE[name] as OperationTool
      const shape = shapeOf(name, tool)
      const a = args as Record<string, unknown>
      const selector = tool.http.operationId
      const operationId = typeof selector === 'string' ? selector : selector.ids[a[selector.by] as string]
      const wire = 'keys' in OPERATIONS[operationId]
      const rename = (tool.http.rename ?? {}) as Record<string, string>
      const pick = (names: string[]) =>
        Object.fromEntries(names.filter((n) => a[n] !== undefined).map((n) => [rename[n] ?? n, a[n]]))
      const keys = (value: unknown) => (wire ? value : camelize(value))

      const document = shape.body === undefined ? undefined : a[shape.body]
      const result = await client.invoke(
        operationId,
        shape.path.map((n) => String(a[n])),
        {
          query: camelize(pick(shape.query)),
          ...(typeof document === 'string'
            ? { raw: { body: new Blob([document]), contentType: 'application/yaml' } }
            : document !== undefined
              ? { body: keys(document) }
              : shape.fields && { body: keys(pick(shape.fields)) }),
        } as never,
      )
      if (result.error) throw new ProblemError(problemOf(result.error))
      return (wire ? result.data : snakify(result.data)) as never
    },
  }
}
