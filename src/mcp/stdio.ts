import { createClient } from '@aigov/client'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { Config } from '../config.js'
import { SOURCE_HEADER } from '../http/plugins/auth.js'
import { clientBackend } from './client-backend.js'
import { createMcpServer } from './server.js'

/** stdout belongs to the MCP messages: every log line goes to stderr. */
const log = (line: string) => process.stderr.write(`aigov mcp: ${line}\n`)

/**
 * `aigov mcp --stdio`: the same tools as /mcp, for an assistant that starts this process,
 * calling a running service through the TypeScript client (SERVICE_API_URL, SERVICE_API_KEY, SERVICE_TENANT).
 */
export async function serveStdio(config: Config): Promise<void> {
  const client = createClient({
    apiKey: config.bootstrapApiKey,
    tenant: config.bootstrapTenant,
    // Audit records of what the assistant changes say source "mcp", as they do for /mcp.
    headers: { [SOURCE_HEADER]: 'mcp' },
  })
  const backend = clientBackend(client)
  const server = createMcpServer({
    readOnly: config.mcpReadOnly,
    caller: () => ({ backend }),
    onUnexpectedError: (err, tool) => log(`${tool} failed: ${err instanceof Error ? err.message : String(err)}`),
  })
  const transport = new StdioServerTransport()
  transport.onclose = () => process.exit(0)
  process.stdin.once('end', () => process.exit(0))
  await server.connect(transport)
  const ping = await client.system.ping()
  if (ping.error)
    log(
      `the service refused the credential or did not answer (${ping.error.message}); tools will report errors until that is fixed`,
    )
  else log(`serving tools over stdio for tenant ${ping.data.tenant}`)
}
