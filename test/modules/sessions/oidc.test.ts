import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../src/app.js'
import { safeReturnTo } from '../../../src/modules/sso/sso.service.js'
import { redactQuery } from '../../../src/shared/urls.js'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../../helpers/harness.js'
import { Browser, formOf, startOidcProvider, type TestProvider } from '../../helpers/oidc-provider.js'

// Single sign-on against a real OpenID provider (oidc-provider) over HTTP: the whole redirect dance, with the
// provider's own login and consent forms, and every way it can fail.

const ACCOUNTS = {
  ada: { email: 'Ada@Example.com', email_verified: true, name: 'Ada Lovelace' },
  bob: { email: 'bob@example.com', email_verified: false },
  eve: { email: 'eve@example.com', email_verified: true },
  dan: { email: 'dan@example.com', email_verified: true },
  new: { email: 'newcomer@example.com', email_verified: true, name: 'New Comer' },
  out: { email: 'outsider@other.example', email_verified: true },
  // As Entra ID sends them: no email_verified, its domain-verified claim instead (or neither).
  entra: { email: 'ada@example.com', xms_edov: true },
  bare: { email: 'ada@example.com' },
}

/**
 * From `start` through the provider's login and consent forms to the redirect back to the service: returns the
 * callback URL the provider sent the browser to, not yet opened (tests open it, or tamper with it first).
 */
async function authorize(
  browser: Browser,
  startUrl: string,
  account: string,
  opts: { deny?: boolean } = {},
): Promise<string> {
  const start = await browser.fetch(startUrl)
  expect(start.status, await start.clone().text()).toBe(303)
  let location = start.headers.get('location')!
  const isCallback = (u: URL) => u.pathname === '/auth/oidc/callback'
  for (let step = 0; step < 6; step++) {
    const { res, url } = await browser.follow(location, {}, isCallback)
    if (isCallback(new URL(url))) return url
    const html = await res.text()
    expect(res.status, html.slice(0, 300)).toBe(200)
    const { action, fields } = formOf(html, url)
    if (opts.deny && fields.prompt === 'consent') {
      const cancel = /<a href="([^"]+)">\[ Cancel \]<\/a>/.exec(html)![1]
      location = new URL(cancel, url).href
      continue
    }
    const body = new URLSearchParams(fields.prompt === 'login' ? { ...fields, login: account, password: 'x' } : fields)
    const posted = await browser.fetch(action, { method: 'POST', body })
    expect(posted.status).toBeGreaterThanOrEqual(300)
    location = new URL(posted.headers.get('location')!, action).href
    if (isCallback(new URL(location))) return location
  }
  throw new Error('the provider never sent the browser back')
}

/** An address where nothing listens. */
async function closedPort(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}`
}

const count = async (t: TestApp, table: 'sessions' | 'users') =>
  Number(
    (
      await t.deps.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

describeEachDialect('single sign-on with OpenID Connect', (dialect) => {
  let t: TestApp
  let base: string
  let idp: TestProvider
  let down: TestProvider
  const startUrl = (tenant = 'acme', returnTo?: string) =>
    `${base}/auth/oidc/start?tenant=${tenant}${returnTo === undefined ? '' : `&return_to=${encodeURIComponent(returnTo)}`}`
  const admin = (tenant = 'acme') => t.as(tenant, 'admin')
  const configure = (tenant: string, body: Record<string, unknown>) =>
    admin(tenant)({ method: 'PUT', url: '/sso', payload: body })
  const person = async (email: string, extra: Record<string, unknown> = {}, tenant = 'acme') => {
    const res = await admin(tenant)({ method: 'POST', url: '/users', payload: { email, role: 'write', ...extra } })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id as string
  }
  /** The callback opened in the browser: what it answers, and whether any session or user was made. */
  async function open(browser: Browser, callbackUrl: string) {
    const [sessions, users] = [await count(t, 'sessions'), await count(t, 'users')]
    const res = await browser.fetch(callbackUrl)
    const body = await res.text()
    return {
      res,
      body,
      created: { sessions: (await count(t, 'sessions')) - sessions, users: (await count(t, 'users')) - users },
    }
  }

  beforeAll(async () => {
    t = await startTestApp(dialect)
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    idp = await startOidcProvider([`${base}/auth/oidc/callback`], ACCOUNTS)
    down = await startOidcProvider([`${base}/auth/oidc/callback`], ACCOUNTS)
    await t.apiKey('acme', 'admin')
    await t.apiKey('globex', 'admin')
    await t.apiKey('initech', 'admin')
    await t.apiKey('umbrella', 'admin')
    await person('ada@example.com')
    await person('bob@example.com')
    await person('dan@example.com', { active: false })
    const res = await configure('acme', {
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
    })
    expect(res.statusCode, res.body).toBe(200)
  })
  afterAll(async () => {
    await idp?.close()
    await down?.close()
    await t?.close()
  })

  it('keeps the configuration for admins: no secret returned or stored in clear, audited without it', async () => {
    const res = await admin()({ method: 'GET', url: '/sso' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret_set: true,
      email_domains: [],
      provision: false,
      // As the request reached the service (here app.inject's host), unless SERVICE_PUBLIC_URL says otherwise.
      redirect_uri: 'http://localhost:80/auth/oidc/callback',
      sign_in_url: 'http://localhost:80/auth/oidc/start?tenant=acme',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    })
    expect(res.body).not.toContain(idp.clientSecret)
    const stored = await t.deps.database.db.selectFrom('sso_configs').selectAll().execute()
    expect(JSON.stringify(stored)).not.toContain(idp.clientSecret)
    expect(stored[0].client_secret).toMatch(/^v1\./)
    const audit = await admin()({ method: 'GET', url: '/audit_logs?action=sso.configured' })
    expect(audit.json().items).toHaveLength(1)
    expect(audit.json().items[0]).toMatchObject({
      action: 'sso.configured',
      resource_type: 'sso_config',
      changes: { issuer: [null, idp.issuer], client_id: [null, idp.clientId] },
      metadata: { client_secret_changed: true },
    })
    expect(audit.body).not.toContain(idp.clientSecret)
    // A write key or a reader may not see or change it.
    expect((await t.as('acme', 'write')({ method: 'GET', url: '/sso' })).statusCode).toBe(403)
    const put = await t.as(
      'acme',
      'write',
    )({
      method: 'PUT',
      url: '/sso',
      payload: { issuer: idp.issuer, client_id: 'x', client_secret: 'y' },
    })
    expect(put.statusCode).toBe(403)
    expect((await admin('globex')({ method: 'GET', url: '/sso' })).statusCode).toBe(404)
  })

  it('refuses an issuer it cannot use with 422 naming the problem, and saves nothing', async () => {
    const closedIssuer = await closedPort()
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { issuer: closedIssuer },
        /issuer: could not reach http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration \(ECONNREFUSED\)/,
      ],
      [{ issuer: 'http://login.example.com' }, /issuer: must be https/],
      [{ issuer: 'not a url' }, /issuer: must be an absolute URL/],
      [{ issuer: `${base}/nothing-here` }, /issuer: .*is not a usable OpenID Connect discovery document/],
      [{ issuer: idp.issuer, provision: true }, /email_domains: provision needs the domains/],
    ]
    for (const [body, detail] of cases) {
      const res = await configure('globex', { issuer: idp.issuer, client_id: 'c', client_secret: 's', ...body })
      expect(res.statusCode, res.body).toBe(422)
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/)
      expect(res.json().detail).toMatch(detail)
    }
    expect((await admin('globex')({ method: 'GET', url: '/sso' })).statusCode).toBe(404)
  })

  it('signs a person in through the whole redirect dance and lands on return_to', async () => {
    const browser = new Browser()
    const callback = await authorize(browser, startUrl('acme', '/console/use-cases?tab=open'), 'ada')
    expect(browser.cookie(new URL(base).hostname, 'aigov_oidc')).toBeDefined()
    const { res, created } = await open(browser, callback)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/console/use-cases?tab=open')
    expect(created).toEqual({ sessions: 1, users: 0 })
    const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('aigov_session='))!
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Lax/)
    // The pending login's cookie has done its work.
    expect(browser.cookie(new URL(base).hostname, 'aigov_oidc')).toBeUndefined()
    const me = await browser.fetch(`${base}${PREFIX}/me`)
    expect(await me.json()).toMatchObject({
      tenant: 'acme',
      role: 'write',
      via: 'session',
      user: { email: 'ada@example.com' },
    })
    const sessions = await admin()({ method: 'GET', url: '/sessions' })
    expect(sessions.json().items.at(-1)).toMatchObject({ method: 'oidc', user: { email: 'ada@example.com' } })
    const audit = await admin()({ method: 'GET', url: '/audit_logs?action=session.created' })
    expect(audit.json().items.at(-1)).toMatchObject({ metadata: { method: 'oidc' }, actor: { type: 'user' } })
    // Only the state's hash is stored, and no PKCE verifier at all.
    const state = new URL(callback).searchParams.get('state')!
    const logins = await t.deps.database.db.selectFrom('oidc_logins').selectAll().execute()
    expect(JSON.stringify(logins)).not.toContain(state)
    expect(logins.every((l) => l.used_at !== null)).toBe(true)
  })

  it('sends a return_to that would leave the service to /console instead', async () => {
    for (const returnTo of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/\tevil', 'console']) {
      expect(safeReturnTo(returnTo, '/console')).toBe('/console')
    }
    expect(safeReturnTo('/console/use-cases/uc_1?x=1#a', '/console')).toBe('/console/use-cases/uc_1?x=1#a')
    const browser = new Browser()
    const { res } = await open(browser, await authorize(browser, startUrl('acme', '//evil.example/phish'), 'ada'))
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/console')
  })

  it('refuses a replayed callback (the same code and state once more): nothing created', async () => {
    const browser = new Browser()
    const callback = await authorize(browser, startUrl(), 'ada')
    const host = new URL(base).hostname
    const cookie = browser.cookie(host, 'aigov_oidc')!
    expect((await open(browser, callback)).res.status).toBe(303)
    browser.setCookie(host, 'aigov_oidc', cookie, '/auth/oidc')
    const replay = await open(browser, callback)
    expect(replay.res.status).toBe(400)
    expect(replay.res.headers.get('content-type')).toMatch(/text\/html/)
    expect(replay.body).toContain('already been completed')
    expect(replay.created).toEqual({ sessions: 0, users: 0 })
  })

  it('refuses a callback without state, or with a state it does not know', async () => {
    const browser = new Browser()
    const callback = new URL(await authorize(browser, startUrl(), 'ada'))
    const noState = new URL(callback)
    noState.searchParams.delete('state')
    const missing = await open(browser, noState.href)
    expect(missing.res.status).toBe(400)
    expect(missing.body).toContain('without the sign-in&#39;s state')
    const tampered = new URL(callback)
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`)
    const unknown = await open(browser, tampered.href)
    expect(unknown.res.status).toBe(400)
    expect(unknown.body).toContain('not known here')
    expect([missing.created, unknown.created]).toEqual([
      { sessions: 0, users: 0 },
      { sessions: 0, users: 0 },
    ])
  })

  it('refuses a sign-in completed in another browser than the one that started it', async () => {
    const mine = new Browser()
    const callback = await authorize(mine, startUrl(), 'ada')
    const theirs = new Browser()
    const noCookie = await open(theirs, callback)
    expect(noCookie.res.status).toBe(400)
    expect(noCookie.body).toContain('started in another browser')
    // A browser with a pending login of its own is refused too.
    expect((await theirs.fetch(startUrl())).status).toBe(303)
    const otherCookie = await open(theirs, callback)
    expect(otherCookie.res.status).toBe(400)
    expect(otherCookie.body).toContain('started in another browser')
    expect([noCookie.created, otherCookie.created]).toEqual([
      { sessions: 0, users: 0 },
      { sessions: 0, users: 0 },
    ])
    // The browser that started it still completes it.
    expect((await open(mine, callback)).res.status).toBe(303)
  })

  it('refuses a pending login past its 10 minutes', async () => {
    const browser = new Browser()
    const callback = await authorize(browser, startUrl(), 'ada')
    await t.deps.database.db
      .updateTable('oidc_logins')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('used_at', 'is', null)
      .execute()
    const res = await open(browser, callback)
    expect(res.res.status).toBe(400)
    expect(res.body).toContain('has expired')
    expect(res.created).toEqual({ sessions: 0, users: 0 })
  })

  it('refuses an unverified, an unknown email, and a deactivated person', async () => {
    for (const [account, text] of [
      ['bob', 'did not confirm that your email address is verified'],
      ['bare', 'did not confirm that your email address is verified'],
      ['eve', 'No account of this organization has your email address'],
      ['dan', 'Your account is deactivated'],
    ] as const) {
      const browser = new Browser()
      const res = await open(browser, await authorize(browser, startUrl(), account))
      expect(res.res.status, account).toBe(400)
      expect(res.body).toContain(text)
      expect(res.created).toEqual({ sessions: 0, users: 0 })
    }
  })

  it("takes Entra ID's xms_edov for a verified email when email_verified is not sent", async () => {
    const browser = new Browser()
    const res = await open(browser, await authorize(browser, startUrl(), 'entra'))
    expect(res.res.status, res.body).toBe(303)
    expect(res.created).toEqual({ sessions: 1, users: 0 })
  })

  it('says what the provider answered when it did not sign the person in (access_denied)', async () => {
    const browser = new Browser()
    const callback = await authorize(browser, startUrl(), 'ada', { deny: true })
    expect(new URL(callback).searchParams.get('error')).toBe('access_denied')
    const res = await open(browser, callback)
    expect(res.res.status).toBe(400)
    expect(res.body).toContain('The identity provider did not sign you in (access_denied)')
    expect(res.created).toEqual({ sessions: 0, users: 0 })
  })

  it('refuses a tenant without single sign-on, and a start without a tenant', async () => {
    const none = await new Browser().fetch(startUrl('globex'))
    expect(none.status).toBe(400)
    expect(await none.text()).toContain('Single sign-on is not set up for this organization')
    const noTenant = await new Browser().fetch(`${base}/auth/oidc/start`)
    expect(noTenant.status).toBe(400)
  })

  it('limits email domains and, with provision, creates a read user for a new verified email', async () => {
    const res = await configure('initech', {
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      email_domains: ['Example.com'],
      provision: true,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ email_domains: ['example.com'], provision: true })
    await person('outsider@other.example', {}, 'initech')
    const outsider = new Browser()
    const refused = await open(outsider, await authorize(outsider, startUrl('initech'), 'out'))
    expect(refused.res.status).toBe(400)
    expect(refused.body).toContain('domain may not sign in')
    expect(refused.created).toEqual({ sessions: 0, users: 0 })
    // Still refused when unverified, provision or not.
    const unverified = new Browser()
    expect((await open(unverified, await authorize(unverified, startUrl('initech'), 'bob'))).created).toEqual({
      sessions: 0,
      users: 0,
    })
    const browser = new Browser()
    const welcomed = await open(browser, await authorize(browser, startUrl('initech'), 'new'))
    expect(welcomed.res.status).toBe(303)
    expect(welcomed.created).toEqual({ sessions: 1, users: 1 })
    const me = await (await browser.fetch(`${base}${PREFIX}/me`)).json()
    expect(me).toMatchObject({
      tenant: 'initech',
      role: 'read',
      user: { email: 'newcomer@example.com', name: 'New Comer' },
    })
    const audit = await admin('initech')({ method: 'GET', url: '/audit_logs?action=user.created' })
    expect(audit.json().items).toHaveLength(2)
    expect(audit.json().items.at(-1)).toMatchObject({ resource_id: me.user.id, actor: { type: 'system' } })
  })

  it('answers 502 when the provider cannot be reached, at the start or when redeeming the code', async () => {
    for (const tenant of ['umbrella', 'globex']) {
      const res = await configure(tenant, { issuer: down.issuer, client_id: down.clientId, client_secret: 'x' })
      expect(res.statusCode, res.body).toBe(200)
    }
    const browser = new Browser()
    // Started while the provider is up (its discovery document is kept), then it goes away.
    const start = await browser.fetch(startUrl('globex'))
    expect(start.status).toBe(303)
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!
    await down.close()
    const atCallback = await open(
      browser,
      `${base}/auth/oidc/callback?code=abc&state=${state}&iss=${encodeURIComponent(down.issuer)}`,
    )
    expect(atCallback.res.status, atCallback.body).toBe(502)
    expect(atCallback.body).toContain('could not be reached')
    expect(atCallback.created).toEqual({ sessions: 0, users: 0 })
    const atStart = await new Browser().fetch(startUrl('umbrella'))
    expect(atStart.status).toBe(502)
    expect(await atStart.text()).toContain('could not be reached')
    await admin('globex')({ method: 'DELETE', url: '/sso' })
  })

  it('removes the configuration (audited): sign-in is then refused', async () => {
    const res = await admin('umbrella')({ method: 'DELETE', url: '/sso' })
    expect(res.statusCode).toBe(204)
    expect((await admin('umbrella')({ method: 'DELETE', url: '/sso' })).statusCode).toBe(404)
    expect((await admin('umbrella')({ method: 'GET', url: '/sso' })).statusCode).toBe(404)
    const audit = await admin('umbrella')({ method: 'GET', url: '/audit_logs?action=sso.removed' })
    expect(audit.json().items).toHaveLength(1)
    expect((await new Browser().fetch(startUrl('umbrella'))).status).toBe(400)
  })
})

describeEachDialect('single sign-on across instances and behind HTTPS', (dialect) => {
  const PUBLIC = 'https://governance.example.com'
  let t: TestApp
  let idp: TestProvider
  let other: Awaited<ReturnType<typeof buildApp>>

  beforeAll(async () => {
    t = await startTestApp(dialect, { SERVICE_PUBLIC_URL: PUBLIC, RATE_LIMIT_TOKEN_PER_MINUTE: '5' })
    // A second instance on the same database, with its own caches.
    other = await buildApp(t.deps)
    await other.ready()
    idp = await startOidcProvider([`${PUBLIC}/auth/oidc/callback`], ACCOUNTS)
    await t.apiKey('acme', 'admin')
    await t.as('acme', 'admin')({ method: 'POST', url: '/users', payload: { email: 'ada@example.com' } })
    const res = await t.as(
      'acme',
      'admin',
    )({
      method: 'PUT',
      url: '/sso',
      payload: { issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().redirect_uri).toBe(`${PUBLIC}/auth/oidc/callback`)
  })
  afterAll(async () => {
    await other?.close()
    await idp?.close()
    await t?.close()
  })

  it('completes on one instance a sign-in started on another, with Secure cookies', async () => {
    const start = await t.app.inject({ method: 'GET', url: '/auth/oidc/start?tenant=acme&return_to=/console/x' })
    expect(start.statusCode).toBe(303)
    const pending = start.cookies.find((c) => c.name === 'aigov_oidc')!
    expect(pending).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/auth/oidc', maxAge: 600 })
    // The provider part in a browser of its own; the service's cookie goes with the callback below.
    const browser = new Browser()
    const authorizeUrl = start.headers.location as string
    const redirected = async (url: string) => {
      let location = url
      for (let step = 0; step < 6; step++) {
        const { res, url: at } = await browser.follow(location, {}, (u) => u.origin === PUBLIC)
        if (new URL(at).origin === PUBLIC) return at
        const { action, fields } = formOf(await res.text(), at)
        const body = new URLSearchParams(
          fields.prompt === 'login' ? { ...fields, login: 'ada', password: 'x' } : fields,
        )
        const posted = await browser.fetch(action, { method: 'POST', body })
        location = new URL(posted.headers.get('location')!, action).href
        if (new URL(location).origin === PUBLIC) return location
      }
      throw new Error('never sent back')
    }
    const callback = new URL(await redirected(authorizeUrl))
    const done = await other.inject({
      method: 'GET',
      url: callback.pathname + callback.search,
      headers: { cookie: `aigov_oidc=${pending.value}` },
    })
    expect(done.statusCode, done.body).toBe(303)
    expect(done.headers.location).toBe('/console/x')
    expect(done.cookies.find((c) => c.name === 'aigov_session')).toMatchObject({ secure: true, httpOnly: true })
  })

  it('limits sign-in attempts per address', async () => {
    const codes = []
    for (let i = 0; i < 6; i++)
      codes.push(
        (
          await t.app.inject({
            method: 'GET',
            url: `/auth/oidc/callback?state=guess${i}&code=x`,
            remoteAddress: '10.2.3.4',
          })
        ).statusCode,
      )
    expect(codes.slice(0, 5)).toEqual([400, 400, 400, 400, 400])
    expect(codes[5]).toBe(429)
  })
})

describe('single sign-on settings', () => {
  it("hides the callback's code and state from logs", () => {
    expect(redactQuery('/auth/oidc/callback?code=c0de&state=st4te&iss=http%3A%2F%2Fidp')).toBe(
      '/auth/oidc/callback?code=[redacted]&state=[redacted]&iss=http%3A%2F%2Fidp',
    )
    expect(redactQuery('/api/v1/integration/use_cases?code=x')).toBe('/api/v1/integration/use_cases?code=x')
  })

  it('allows http issuers on loopback addresses only', async () => {
    const { checkIssuerUrl } = await import('../../../src/modules/sso/sso.service.js')
    for (const ok of ['https://login.example.com', 'http://127.0.0.1:8080', 'http://[::1]:9000', 'http://localhost'])
      expect(() => checkIssuerUrl(ok)).not.toThrow()
    for (const bad of ['http://10.0.0.1', 'http://login.example.com', 'ftp://x.example', 'https://x.example/?a=1'])
      expect(() => checkIssuerUrl(bad)).toThrow(/issuer/)
  })
})
