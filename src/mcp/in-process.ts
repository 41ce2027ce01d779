import type { Services } from '../services.js'
import type { Ctx } from '../shared/context.js'
import { type GovernanceBackend, type OperationTool, TOOL_TABLE } from './tools.js'

/** The tools' backend inside the service: the very service objects the HTTP routes call, with the MCP caller's context. */
export function inProcessBackend(s: Services, ctx: Ctx): GovernanceBackend {
  return { call: (name, args) => (TOOL_TABLE[name] as OperationTool).service(s, ctx, args) as never }
}
