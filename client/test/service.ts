import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
// A real `aigov serve` process on a fresh SQLite database, with a known bootstrap key, for the client tests.
import { freshDatabase, type TestDatabase } from '../../test/helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../../test/helpers/process.js'

export const API_KEY = 'sk_client_test_key_0123456789abcdefghijklmnopqrstuvwxyz'
export const TENANT = 'client-test'

export interface TestService {
  /** Replace it to restart the service (same database and settings). */
  process: ServiceProcess
  baseUrl: string
  apiKey: string
  tenant: string
  /** The settings it was started with. */
  env: Record<string, string>
  stop(): Promise<void>
}

export async function startService(extra: Record<string, string> = {}): Promise<TestService> {
  const db: TestDatabase = await freshDatabase('sqlite')
  const env = {
    ...db.env,
    SERVICE_JWT_SECRET: 'client-test-secret-that-is-at-least-32-bytes',
    SERVICE_API_KEY: API_KEY,
    SERVICE_TENANT: TENANT,
    SERVICE_STARTER_LIBRARY: 'false',
    RATE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_TOKEN_PER_MINUTE: '100000',
    ...extra,
  }
  const service: TestService = {
    process: await startServiceProcess(env),
    baseUrl: '',
    apiKey: API_KEY,
    tenant: TENANT,
    env,
    async stop() {
      await service.process.stop()
      await db.drop()
    },
  }
  service.baseUrl = service.process.baseUrl
  return service
}

/** A fetch that counts the requests it forwards to the real fetch, by method and path. */
export function countingFetch() {
  const calls: { method: string; path: string; headers: Record<string, string> }[] = []
  const wrapped: typeof fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url)
    calls.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      headers: { ...(init?.headers as Record<string, string>) },
    })
    return fetch(input, init)
  }
  return {
    fetch: wrapped,
    calls,
    exchanges: () => calls.filter((c) => c.path.endsWith('/auth/token')).length,
  }
}

/** What the proxy does with one request: pass it on, answer by itself, or pass it on and then drop the answer. */
export type ProxyAction =
  | 'forward'
  | 'forward-then-drop'
  | { status: number; headers?: Record<string, string>; body?: string }

export interface TestProxy {
  baseUrl: string
  requests: { method: string; path: string; headers: IncomingMessage['headers'] }[]
  close(): Promise<void>
}

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'content-encoding',
])

/** A real HTTP proxy in front of `target` (or in front of nothing, when every action answers by itself). */
export async function startProxy(
  target: string | undefined,
  decide: (req: IncomingMessage, index: number) => ProxyAction,
): Promise<TestProxy> {
  const requests: TestProxy['requests'] = []
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const index = requests.push({ method: req.method!, path: req.url!, headers: req.headers }) - 1
    const action = decide(req, index)
    if (typeof action === 'object') {
      res.writeHead(action.status, action.headers ?? {})
      res.end(action.body ?? '')
      return
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers))
      if (!HOP_BY_HOP.has(name) && typeof value === 'string') headers[name] = value
    const upstream = await fetch(target + req.url!, {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    })
    const text = await upstream.text()
    if (action === 'forward-then-drop') {
      req.socket.destroy()
      return
    }
    const out: Record<string, string> = {}
    upstream.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name)) out[name] = value
    })
    res.writeHead(upstream.status, out)
    res.end(text)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
