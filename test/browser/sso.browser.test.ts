import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PREFIX, startTestApp, type TestApp } from '../helpers/harness.js'
import { startOidcProvider, type TestProvider } from '../helpers/oidc-provider.js'

// Single sign-on in headless Chromium: the service's start, the provider's own login and consent pages, the
// callback, and the session cookie the browser then carries to the API.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const hasBrowser = existsSync(CHROMIUM)

describe.skipIf(!hasBrowser)(
  `single sign-on in a browser${hasBrowser ? '' : ` — skipped: no Chromium at ${CHROMIUM}`}`,
  () => {
    let browser: Browser
    let t: TestApp
    let idp: TestProvider
    let base: string

    beforeAll(async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
      })
      t = await startTestApp('sqlite')
      base = await t.app.listen({ port: 0, host: '127.0.0.1' })
      idp = await startOidcProvider([`${base}/auth/oidc/callback`], {
        grace: { email: 'grace@example.com', email_verified: true, name: 'Grace Hopper' },
      })
      await t.apiKey('acme', 'admin')
      const admin = t.as('acme', 'admin')
      await admin({ method: 'POST', url: '/users', payload: { email: 'grace@example.com', role: 'write' } })
      const res = await admin({
        method: 'PUT',
        url: '/sso',
        payload: { issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret },
      })
      expect(res.statusCode, res.body).toBe(200)
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await idp?.close()
      await t?.close()
    })

    it('signs a person in at the provider and lands on return_to with a session', async () => {
      const context = await browser.newContext()
      const page = await context.newPage()
      await page.goto(`${base}/auth/oidc/start?tenant=acme&return_to=${encodeURIComponent('/console/')}`, {
        waitUntil: 'domcontentloaded',
      })
      // The provider's login form (any password), then its consent form.
      expect(page.url().startsWith(idp.issuer)).toBe(true)
      await page.fill('input[name="login"]', 'grace')
      await page.fill('input[name="password"]', 'anything')
      await Promise.all([
        page.waitForURL(/\/interaction\//, { waitUntil: 'domcontentloaded' }),
        page.click('button[type="submit"]'),
      ])
      await Promise.all([
        page.waitForURL((url) => url.href.startsWith(`${base}/console/`), { waitUntil: 'commit' }),
        page.click('button[type="submit"]'),
      ])
      const cookies = await context.cookies(base)
      expect(cookies.find((c) => c.name === 'aigov_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' })
      expect(cookies.find((c) => c.name === 'aigov_oidc')).toBeUndefined()
      const me = await page.evaluate(async (url) => (await fetch(url)).json(), `${base}${PREFIX}/me`)
      expect(me).toMatchObject({ tenant: 'acme', role: 'write', via: 'session', user: { email: 'grace@example.com' } })
      await context.close()
    }, 60_000)
  },
)
