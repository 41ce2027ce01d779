import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, PREFIX, type TestDatabase } from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'

const KEY = 'sk_mcp_sessions_test_key_0123456789abcdefABCDEF'
const SESSIONS = 5000

/** The process's resident set high-water mark, in MiB (Linux). */
const peakRssMiB = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

// A read key opening MCP sessions in a loop used to grow the heap until V8 aborted (about 1 300 sessions under a 160 MB cap).
describe('MCP over HTTP under npm start’s heap cap', () => {
  let db: TestDatabase
  let service: ServiceProcess
  let headers: Record<string, string>

  beforeAll(async () => {
    db = await freshDatabase('sqlite')
    service = await startServiceProcess(
      {
        ...db.env,
        ENABLE_MCP_SERVER: 'true',
        SERVICE_API_KEY: KEY,
        SERVICE_STARTER_LIBRARY: 'false',
        RATE_LIMIT_PER_MINUTE: '1000000',
        SERVICE_JWT_SECRET: 'mcp-sessions-test-secret-of-32-bytes-or-more',
      },
      undefined,
      ['--max-old-space-size=160'],
    )
    const token = await fetch(`${service.baseUrl}${PREFIX}/auth/token`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'x-tenant': 'default' },
    })
    headers = {
      authorization: `Bearer ${(await token.json()).access_token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    }
  })
  afterAll(async () => {
    await service?.stop()
    await db?.drop()
  })

  it(`answers ${SESSIONS} initializes and stays up, keeping nothing per session`, async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'loop', version: '1' } },
    })
    let next = 0
    const statuses = new Map<number, number>()
    const sessionIds = new Set<string>()
    const worker = async () => {
      while (next++ < SESSIONS) {
        const res = await fetch(`${service.baseUrl}/mcp`, { method: 'POST', headers, body: initialize })
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        const id = res.headers.get('mcp-session-id')
        if (id) sessionIds.add(id)
        await res.arrayBuffer()
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
    expect(Object.fromEntries(statuses)).toEqual({ 200: SESSIONS })
    // Stateless: no session id is handed out, so there is nothing to keep.
    expect(sessionIds.size).toBe(0)
    expect(service.child.exitCode).toBeNull()
    const rss = peakRssMiB(service.child.pid!)
    console.log(`MCP: ${SESSIONS} initializes, peak RSS ${rss.toFixed(0)} MiB`)
    expect(rss).toBeLessThan(300)

    // And it still serves a tool call afterwards.
    const call = await fetch(`${service.baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'list_use_cases', arguments: { page_limit: 1 } },
      }),
    })
    expect(call.status).toBe(200)
    expect((await call.json()).result.structuredContent.items).toEqual([])
  }, 90_000)
})
