import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, POSTGRES_URL, REDIS_URL, type TestDatabase } from '../../helpers/harness.js'
import { runCli, type ServiceProcess, startServiceProcess } from '../../helpers/process.js'

const P = '/api/v1/integration'
const ready = Boolean(POSTGRES_URL && REDIS_URL)

describe.skipIf(!ready)(
  `sessions across two service processes on PostgreSQL and Redis${ready ? '' : ' — skipped: needs DATABASE_URL (PostgreSQL) and REDIS_URL'}`,
  () => {
    let db: TestDatabase
    let a: ServiceProcess
    let b: ServiceProcess
    let env: Record<string, string>
    const tenant = `signin-${Date.now().toString(36)}`
    const adminKey = `sk_signin_instances_admin_${Date.now()}_abcdefghijklmnop`

    beforeAll(async () => {
      db = await freshDatabase('postgres')
      env = {
        ...db.env,
        REDIS_URL: REDIS_URL!,
        SERVICE_JWT_SECRET: 'shared-secret-for-both-instances-0123456789',
        SERVICE_API_KEY: adminKey,
        SERVICE_TENANT: tenant,
        SERVICE_STARTER_LIBRARY: 'false',
        SERVICE_PUBLIC_URL: 'https://governance.example.com',
      }
      ;[a, b] = await Promise.all([startServiceProcess(env), startServiceProcess(env)])
    }, 60_000)
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()])
      await db?.drop()
    })

    it('signs in with a link from the CLI on one instance; sign-out there is refused on the other at once', async () => {
      const token = (
        await (
          await fetch(`${a.baseUrl}${P}/auth/token`, {
            method: 'POST',
            headers: { 'x-api-key': adminKey, 'x-tenant': tenant },
          })
        ).json()
      ).access_token
      const user = await fetch(`${a.baseUrl}${P}/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ada@example.com', name: 'Ada', role: 'write' }),
      })
      expect(user.status).toBe(201)

      const cli = runCli(['users', 'login-link', '--tenant', tenant, '--email', 'ADA@example.com'], env)
      expect(cli.code, cli.stderr).toBe(0)
      const link = cli.stdout.trim()
      expect(link).toMatch(/^https:\/\/governance\.example\.com\/auth\/link\/[A-Za-z0-9_-]{43}$/)
      const path = new URL(link).pathname

      const opened = await fetch(`${a.baseUrl}${path}`, { redirect: 'manual' })
      expect(opened.status).toBe(303)
      expect(opened.headers.get('location')).toBe('/console')
      const setCookie = opened.headers.get('set-cookie')!
      expect(setCookie).toMatch(/HttpOnly/)
      expect(setCookie).toMatch(/Secure/)
      const cookie = setCookie.split(';')[0]
      // The link's token never reaches the log.
      expect(a.output()).not.toContain(path.split('/').at(-1))

      const meOn = (s: ServiceProcess) => fetch(`${s.baseUrl}${P}/me`, { headers: { cookie } })
      expect((await meOn(b)).status).toBe(200)
      const out = await fetch(`${a.baseUrl}/auth/logout`, {
        method: 'POST',
        headers: { cookie, origin: 'https://governance.example.com' },
      })
      expect(out.status).toBe(204)
      expect((await meOn(b)).status).toBe(401)
      expect((await meOn(a)).status).toBe(401)
    })
  },
)
