import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { AppError } from '../http/errors.js'
import { problemFields } from '../http/plugins/problems.js'
import { compileJsonValidator } from '../http/plugins/validation.js'
import { type Role, roleAllows } from '../shared/context.js'
import { SERVICE_VERSION } from '../version.js'
import { ProblemError } from './problem-error.js'
import { type GovernanceBackend, TOOLS, type ToolDef, useCaseOverview } from './tools.js'

/** Who is calling a tool, resolved per MCP request. */
export interface ToolCaller {
  backend: GovernanceBackend
  /** Known in-process (bound to the session); the remote service checks it itself in stdio mode. */
  role?: Role
  requestId?: string | null
}

export interface McpServerOptions {
  readOnly: boolean
  caller(authInfo: AuthInfo | undefined): ToolCaller
  /** Told about failures that are not problem responses (bugs, outages); the caller only sees a 500 problem. */
  onUnexpectedError?(err: unknown, tool: string): void
}

const RESOURCE_TEMPLATE = 'governance://use_cases/{id}'
const RESOURCE_URI = /^governance:\/\/use_cases\/([^/?#]+)$/
/** MCP's "resource not found" code. */
const RESOURCE_NOT_FOUND = -32002

const INSTRUCTIONS = [
  'AI-governance registry of one tenant: use cases (uc_…), models (mdl_…), vendors (vnd_…), risk types (rt_…) and scenarios (rs_…),',
  'policy packs and controls, workflow stages (ws_…), and an audit log (al_…).',
  'Start with governance_summary for an overview; list_* tools page with page_limit/page_after (pass back pagination.next_cursor).',
  'A failed call returns isError with a problem document: code (not_found, conflict, validation_failed, forbidden, …), detail and per-field errors.',
].join(' ')

const json = (value: unknown) => JSON.stringify(value, null, 1)

/** The tool list offered: every tool, or only the reading ones when MCP_READ_ONLY. */
export function offeredTools(readOnly: boolean): ToolDef[] {
  return readOnly ? TOOLS.filter((t) => !t.write) : TOOLS
}

interface ToolTable {
  byName: Map<string, { tool: ToolDef; validate: (data: unknown) => object }>
  listed: {
    name: string
    title: string
    description: string
    inputSchema: { type: 'object' }
    annotations: Record<string, unknown>
  }[]
}

const toolTables = new Map<boolean, ToolTable>()

/** Validators and the listed tools, built once per process: /mcp makes a server for every request. */
function toolTable(readOnly: boolean): ToolTable {
  let table = toolTables.get(readOnly)
  if (table) return table
  const tools = offeredTools(readOnly)
  table = {
    byName: new Map(tools.map((t) => [t.name, { tool: t, validate: compileJsonValidator<object>(t.input) }])),
    // Plain JSON Schema (TypeBox adds symbol keys).
    listed: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: JSON.parse(JSON.stringify(t.input)) as { type: 'object' },
      annotations: {
        title: t.title,
        readOnlyHint: !t.write,
        destructiveHint: t.name.startsWith('unlink_'),
        idempotentHint: !t.write || t.name.startsWith('link_') || t.name.startsWith('unlink_'),
        openWorldHint: false,
      },
    })),
  }
  toolTables.set(readOnly, table)
  return table
}

/**
 * One MCP server over one tool table, whatever the transport. The low-level Server is used, not McpServer,
 * because McpServer takes zod schemas only; this way the families' TypeBox JSON Schemas are the tools' input schemas,
 * and arguments are checked by the HTTP layer's own validator.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const { byName, listed } = toolTable(options.readOnly)

  const server = new Server(
    { name: 'aigov', title: 'AI governance registry', version: SERVICE_VERSION },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: INSTRUCTIONS },
  )

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const entry = byName.get(request.params.name)
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"`)
    const caller = options.caller(extra.authInfo)
    try {
      const needed = neededRole(entry.tool)
      if (caller.role && !roleAllows(caller.role, needed)) throw toolForbidden(entry.tool, caller.role)
      const args = entry.validate(request.params.arguments ?? {})
      const result = await entry.tool.run(caller.backend, args)
      return { content: [{ type: 'text', text: json(result) }], structuredContent: result as Record<string, unknown> }
    } catch (err) {
      return toolError(err, entry.tool, caller, options)
    }
  })

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: RESOURCE_TEMPLATE,
        name: 'use_case',
        title: 'Use case overview',
        description:
          'A use case with its linked models, vendors and risk scenarios, applied policy packs, controls and their status, and workflow position.',
        mimeType: 'application/json',
      },
    ],
  }))

  // Lists the use cases as readable resources, a page at a time (the MCP cursor is the list's cursor).
  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const caller = options.caller(extra.authInfo)
    const page = await asMcpError(() =>
      caller.backend.call('list_use_cases', {
        page_limit: 100,
        ...(request.params?.cursor ? { page_after: request.params.cursor } : {}),
      }),
    )
    return {
      resources: page.items.map((uc) => ({
        uri: `governance://use_cases/${uc.id}`,
        name: uc.name,
        description:
          [uc.risk_category_level ? `risk: ${uc.risk_category_level}` : null, uc.description]
            .filter(Boolean)
            .join(' — ') || undefined,
        mimeType: 'application/json',
      })),
      ...(page.pagination.next_cursor ? { nextCursor: page.pagination.next_cursor } : {}),
    }
  })

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const match = RESOURCE_URI.exec(request.params.uri)
    if (!match)
      throw new McpError(RESOURCE_NOT_FOUND, `unknown resource ${request.params.uri}; use ${RESOURCE_TEMPLATE}`)
    const caller = options.caller(extra.authInfo)
    const overview = await asMcpError(() => useCaseOverview(caller.backend, decodeURIComponent(match[1])))
    return { contents: [{ uri: request.params.uri, mimeType: 'application/json', text: json(overview) }] }
  })

  return server
}

/** The role a tool needs. */
export const neededRole = (tool: ToolDef): Role => tool.role ?? (tool.write ? 'write' : 'read')

/** The refusal of a tool for too low a role: one message whichever side checked it (this server, or the service behind stdio). */
function toolForbidden(tool: ToolDef, role: string): AppError {
  const needed = neededRole(tool)
  const why = needed === 'admin' ? "changes the tenant's definitions" : 'changes data'
  return new AppError(
    'forbidden',
    `this API key has role "${role}"; ${tool.name} ${why} and needs "${needed}"`,
    undefined,
    { role, required_role: needed },
  )
}

/** A failure as an MCP tool result: isError, with the problem document as text and as structured content. */
function toolError(err: unknown, tool: ToolDef, caller: ToolCaller, options: McpServerOptions): CallToolResult {
  let problem: Record<string, unknown>
  const refusedRole =
    err instanceof ProblemError &&
    err.problem.code === 'forbidden' &&
    typeof err.problem.role === 'string' &&
    typeof err.problem.required_role === 'string'
  // Behind stdio the service refuses the route; the caller asked for a tool, so the refusal names the tool.
  if (refusedRole)
    problem = problemFields(
      toolForbidden(tool, err.problem.role as string),
      `tools/${tool.name}`,
      typeof err.problem.request_id === 'string' ? err.problem.request_id : '',
    )
  else if (err instanceof ProblemError) problem = err.problem
  else if (err instanceof AppError) problem = problemFields(err, `tools/${tool.name}`, caller.requestId ?? '')
  else {
    options.onUnexpectedError?.(err, tool.name)
    problem = problemFields(
      new AppError('internal', 'an unexpected error occurred; quote the request_id when reporting it'),
      `tools/${tool.name}`,
      caller.requestId ?? '',
    )
  }
  return { isError: true, content: [{ type: 'text', text: json(problem) }], structuredContent: problem }
}

/** Resources have no isError: a failure is a JSON-RPC error carrying the problem document as data. */
async function asMcpError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (err instanceof ProblemError)
      throw new McpError(
        err.problem.code === 'not_found' ? RESOURCE_NOT_FOUND : ErrorCode.InvalidRequest,
        err.message,
        err.problem,
      )
    if (err instanceof AppError)
      throw new McpError(err.code === 'not_found' ? RESOURCE_NOT_FOUND : ErrorCode.InvalidRequest, err.detail, {
        code: err.code,
        status: err.status,
      })
    throw err
  }
}
