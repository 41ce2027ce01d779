import { afterEach, expect, it } from 'vitest'
import { describeEachDialect, freshDatabase, type TestDatabase } from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'

// Invariant 3 (an acknowledged write survives kill -9) and 2 (no mutation without its audit record, and no
// audit record without its mutation), checked against a real process killed in the middle of concurrent creates.

const P = '/api/v1/integration'
const TENANT = 'crash'
const KEY = 'sk_crash_test_admin_key_0123456789abcdefghijklmnop'
const WRITERS = 12

describeEachDialect('fault: SIGKILL under concurrent creates', (dialect) => {
  let db: TestDatabase | undefined
  let service: ServiceProcess | undefined
  afterEach(async () => {
    await service?.stop('SIGKILL')
    await db?.drop()
  })

  it('keeps every acknowledged create with exactly one audit record and leaves nothing half-written', async () => {
    db = await freshDatabase(dialect)
    const env = {
      ...db.env,
      SERVICE_JWT_SECRET: 'crash-test-secret-0123456789abcdefghijkl',
      SERVICE_API_KEY: KEY,
      SERVICE_TENANT: TENANT,
      SERVICE_STARTER_LIBRARY: 'false',
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_TOKEN_PER_MINUTE: '1000',
    }
    service = await startServiceProcess(env)
    const token = await tokenFor(service.baseUrl)

    const acknowledged = new Map<string, string>() // id -> name
    let attempted = 0
    const refused: string[] = []
    let stopped = false
    const writer = async (w: number) => {
      for (let i = 0; !stopped; i++) {
        const name = `crash ${w}-${i}`
        attempted++
        try {
          const res = await fetch(`${service!.baseUrl}${P}/use_cases`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name, description: 'written while the process may die', regions: ['EU'] }),
          })
          const body = (await res.json()) as { id: string }
          if (res.status === 201) acknowledged.set(body.id, name)
          else refused.push(`${res.status} ${JSON.stringify(body).slice(0, 200)}`) // not acknowledged: must leave nothing behind
        } catch {
          return // the connection died with the process
        }
      }
    }
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w))
    // Kill once a good number of creates are in the books, while the writers keep going.
    const deadline = Date.now() + 15_000
    while (acknowledged.size < 150 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    service.child.kill('SIGKILL')
    stopped = true
    await Promise.all(writers)
    const killed = service.child
    if (killed.exitCode === null && killed.signalCode === null) await new Promise((r) => killed.once('exit', r))
    expect(acknowledged.size, `refused: ${refused.slice(0, 3).join('; ')}`).toBeGreaterThanOrEqual(150)

    service = await startServiceProcess(env)
    const after = await tokenFor(service.baseUrl)
    const get = async (path: string) => {
      const res = await fetch(`${service!.baseUrl}${P}${path}`, { headers: { authorization: `Bearer ${after}` } })
      expect(res.status, path).toBe(200)
      return res.json() as Promise<any>
    }
    const walk = async (path: string) => {
      const items: any[] = []
      let cursor: string | null = null
      do {
        const sep = path.includes('?') ? '&' : '?'
        const page: any = await get(`${path}${sep}page_limit=100${cursor ? `&page_after=${cursor}` : ''}`)
        items.push(...page.items)
        cursor = page.pagination.next_cursor
      } while (cursor)
      return items
    }
    const useCases = new Map((await walk('/use_cases')).map((uc) => [uc.id as string, uc.name as string]))
    const audits = await walk('/audit_logs?resource_type=use_case')

    // Every acknowledged create is there, as acknowledged.
    for (const [id, name] of acknowledged) expect(useCases.get(id), id).toBe(name)
    // Commits whose answer was lost in the crash may exist too, but only whole: one record and one audit each.
    expect(useCases.size).toBeLessThanOrEqual(attempted)
    const created = audits.filter((a) => a.action === 'use_case.created')
    expect(audits.length).toBe(created.length)
    expect(new Set(created.map((a) => a.resource_id)).size).toBe(created.length)
    expect(new Set(created.map((a) => a.resource_id))).toEqual(new Set(useCases.keys()))
    // And the tenant's hash chain is unbroken across the crash.
    expect(await get('/audit_logs/verify')).toMatchObject({ ok: true, first_bad_id: null })
  }, 40_000)
})

async function tokenFor(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}${P}/auth/token`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'x-tenant': TENANT },
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}
