// A real `aigov serve` process on a fresh SQLite database, with a known bootstrap key, for the client tests.
import { freshDatabase, type TestDatabase } from '../../test/helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../../test/helpers/process.js'

export const API_KEY = 'sk_client_test_key_0123456789abcdefghijklmnopqrstuvwxyz'
export const TENANT = 'client-test'

export interface TestService {
  process: ServiceProcess
  baseUrl: string
  apiKey: string
  tenant: string
  stop(): Promise<void>
}

export async function startService(env: Record<string, string> = {}): Promise<TestService> {
  const db: TestDatabase = await freshDatabase('sqlite')
  const process = await startServiceProcess({
    ...db.env,
    SERVICE_JWT_SECRET: 'client-test-secret-that-is-at-least-32-bytes',
    SERVICE_API_KEY: API_KEY,
    SERVICE_TENANT: TENANT,
    SERVICE_STARTER_LIBRARY: 'false',
    RATE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_TOKEN_PER_MINUTE: '100000',
    ...env,
  })
  return {
    process,
    baseUrl: process.baseUrl,
    apiKey: API_KEY,
    tenant: TENANT,
    async stop() {
      await process.stop()
      await db.drop()
    },
  }
}

/** A fetch that counts the requests it forwards to the real fetch, by method and path. */
export function countingFetch() {
  const calls: { method: string; path: string; headers: Record<string, string> }[] = []
  const wrapped: typeof fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url)
    calls.push({ method: init?.method ?? 'GET', path: url.pathname, headers: { ...(init?.headers as Record<string, string>) } })
    return fetch(input, init)
  }
  return {
    fetch: wrapped,
    calls,
    exchanges: () => calls.filter((c) => c.path.endsWith('/auth/token')).length,
  }
}
