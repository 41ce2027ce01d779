import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSessionsService } from '../../../src/modules/sessions/sessions.service.js'
import { systemCtx } from '../../../src/shared/context.js'
import { redactQuery } from '../../../src/shared/urls.js'
import { INTAKE_SECTIONS } from '../../helpers/governance.js'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../../helpers/harness.js'

const HOST = 'governance.test'
const ORIGIN = `http://${HOST}`

interface SignedIn {
  cookie: string
  csrf: string
  userId: string
  sessionId: string
}

/** A person of tenant `tenant` with `role`, as an admin key creates them. */
async function createPerson(t: TestApp, email: string, role: 'read' | 'write' | 'admin', tenant = 'acme') {
  const res = await t.as(
    tenant,
    'admin',
  )({ method: 'POST', url: '/users', payload: { email, name: `Person ${email}`, role } })
  expect(res.statusCode, res.body).toBe(201)
  return res.json().id as string
}

async function linkFor(t: TestApp, email: string, tenant = 'acme'): Promise<string> {
  const link = await createSessionsService(t.deps).createLoginLink(systemCtx(tenant, 'cli'), email)
  return link.token
}

/** Opens a one-time link the way a browser does, and reads /me with the session it set. */
async function signIn(t: TestApp, email: string, tenant = 'acme'): Promise<SignedIn> {
  const token = await linkFor(t, email, tenant)
  const res = await t.app.inject({ method: 'GET', url: `/auth/link/${token}`, headers: { host: HOST } })
  expect(res.statusCode, res.body).toBe(303)
  expect(res.headers.location).toBe('/console')
  const cookie = res.cookies.find((c) => c.name === 'aigov_session')!
  const me = await asSession(t, cookie.value)({ method: 'GET', url: '/me' })
  expect(me.statusCode, me.body).toBe(200)
  const sessions = await t.as(tenant, 'admin')({ method: 'GET', url: `/sessions?user_id=${me.json().user.id}` })
  return {
    cookie: cookie.value,
    csrf: me.json().csrf_token,
    userId: me.json().user.id,
    sessionId: sessions.json().items.at(-1).id,
  }
}

/** app.inject from the service's own pages: the session cookie, and (for writes) the CSRF token and Origin. */
function asSession(t: TestApp, cookie: string, extra: Record<string, string> = {}) {
  return (opts: InjectOptions & { url: string }) =>
    t.app.inject({
      ...opts,
      url: opts.url.startsWith('/auth/') ? opts.url : PREFIX + opts.url,
      headers: { host: HOST, cookie: `aigov_session=${cookie}`, ...extra, ...(opts.headers as object) },
    })
}
const writer = (t: TestApp, s: SignedIn) => asSession(t, s.cookie, { origin: ORIGIN, 'x-csrf-token': s.csrf })

const sessionCount = async (t: TestApp) =>
  Number(
    (
      await t.deps.database.db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

describeEachDialect('people sign in: one-time links and sessions', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
    await t.apiKey('acme', 'admin')
    await t.apiKey('globex', 'admin')
  })
  afterAll(async () => t?.close())

  it('signs a person in with a one-time link: an HttpOnly SameSite=Lax cookie, then /me says who they are', async () => {
    await createPerson(t, 'ada@example.com', 'write')
    const token = await linkFor(t, 'ada@example.com')
    const res = await t.app.inject({ method: 'GET', url: `/auth/link/${token}`, headers: { host: HOST } })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/console')
    const cookie = res.cookies.find((c) => c.name === 'aigov_session')!
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 7 * 86400 })
    expect(cookie.secure).toBeUndefined()
    const me = await asSession(t, cookie.value)({ method: 'GET', url: '/me' })
    expect(me.statusCode).toBe(200)
    expect(me.headers['cache-control']).toBe('no-store')
    expect(me.json()).toMatchObject({
      tenant: 'acme',
      role: 'write',
      via: 'session',
      user: { email: 'ada@example.com', name: 'Person ada@example.com' },
      api_key: null,
    })
    expect(me.json().csrf_token).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    // Only the hashes are stored: neither the link's token nor the cookie's secret is in the database.
    const links = await t.deps.database.db.selectFrom('login_links').selectAll().execute()
    const stored = await t.deps.database.db.selectFrom('sessions').selectAll().execute()
    expect(JSON.stringify([links, stored])).not.toContain(token)
    expect(JSON.stringify([links, stored])).not.toContain(cookie.value)
  })

  it('answers /me for an API key bearer too', async () => {
    const me = await t.as('acme', 'read')({ method: 'GET', url: '/me' })
    expect(me.json()).toMatchObject({ tenant: 'acme', role: 'read', via: 'api_key', user: null })
    expect(me.json().api_key.id).toMatch(/^key_/)
    expect(me.json().csrf_token).toBeUndefined()
  })

  it('refuses a used, an expired and an unknown link with a page saying why, and signs no one in', async () => {
    await createPerson(t, 'bob@example.com', 'read')
    const token = await linkFor(t, 'bob@example.com')
    expect((await t.app.inject({ method: 'GET', url: `/auth/link/${token}` })).statusCode).toBe(303)
    const before = await sessionCount(t)
    const again = await t.app.inject({ method: 'GET', url: `/auth/link/${token}` })
    expect(again.statusCode).toBe(400)
    expect(again.headers['content-type']).toMatch(/^text\/html/)
    expect(again.body).toContain('already been used')
    expect(again.cookies).toEqual([])

    const expired = await linkFor(t, 'bob@example.com')
    await t.deps.database.db
      .updateTable('login_links')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('used_at', 'is', null)
      .execute()
    const late = await t.app.inject({ method: 'GET', url: `/auth/link/${expired}` })
    expect(late.statusCode).toBe(400)
    expect(late.body).toContain('expired')

    const unknown = await t.app.inject({ method: 'GET', url: '/auth/link/not-a-real-token' })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.body).toContain('not valid')
    expect(await sessionCount(t)).toBe(before)
  })

  it('two opens of one link at once sign in once', async () => {
    await createPerson(t, 'race@example.com', 'read')
    const token = await linkFor(t, 'race@example.com')
    const results = await Promise.all([1, 2, 3].map(() => t.app.inject({ method: 'GET', url: `/auth/link/${token}` })))
    expect(results.map((r) => r.statusCode).sort()).toEqual([303, 400, 400])
  })

  it("refuses a deactivated person's link, and deactivation ends their sessions at once", async () => {
    const id = await createPerson(t, 'carol@example.com', 'write')
    const token = await linkFor(t, 'carol@example.com')
    const s = await signIn(t, 'carol@example.com')
    const off = await t.as('acme', 'admin')({ method: 'PATCH', url: `/users/${id}`, payload: { active: false } })
    expect(off.statusCode, off.body).toBe(200)
    expect((await asSession(t, s.cookie)({ method: 'GET', url: '/me' })).statusCode).toBe(401)
    const refused = await t.app.inject({ method: 'GET', url: `/auth/link/${token}` })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('deactivated')
    // Reactivated, the old session stays ended.
    await t.as('acme', 'admin')({ method: 'PATCH', url: `/users/${id}`, payload: { active: true } })
    expect((await asSession(t, s.cookie)({ method: 'GET', url: '/me' })).statusCode).toBe(401)
    const ended = await t.as(
      'acme',
      'admin',
    )({ method: 'GET', url: `/audit_logs?action=session.ended&resource_id=${s.sessionId}` })
    expect(ended.json().items[0]).toMatchObject({ metadata: { reason: 'user.deactivated' }, sub_object_id: id })
  })

  it("a deleted person's sessions end with them", async () => {
    const id = await createPerson(t, 'dan@example.com', 'write')
    const s = await signIn(t, 'dan@example.com')
    expect((await t.as('acme', 'admin')({ method: 'DELETE', url: `/users/${id}` })).statusCode).toBe(204)
    expect((await asSession(t, s.cookie)({ method: 'GET', url: '/me' })).statusCode).toBe(401)
  })

  it('a cookie write needs the CSRF token and this service as Origin, else 403 and nothing changes', async () => {
    await createPerson(t, 'erin@example.com', 'write')
    const s = await signIn(t, 'erin@example.com')
    const body = { name: 'Chatbot for claims' }
    const noToken = await asSession(t, s.cookie, { origin: ORIGIN })({
      method: 'POST',
      url: '/use_cases',
      payload: body,
    })
    expect(noToken.statusCode).toBe(403)
    expect(noToken.json().detail).toContain('X-CSRF-Token')
    const wrongToken = await asSession(t, s.cookie, { origin: ORIGIN, 'x-csrf-token': 'x'.repeat(43) })({
      method: 'POST',
      url: '/use_cases',
      payload: body,
    })
    expect(wrongToken.statusCode).toBe(403)
    const elsewhere = await asSession(t, s.cookie, { origin: 'https://evil.example', 'x-csrf-token': s.csrf })({
      method: 'POST',
      url: '/use_cases',
      payload: body,
    })
    expect(elsewhere.statusCode).toBe(403)
    expect(elsewhere.json().detail).toContain('Origin')
    const noOrigin = await asSession(t, s.cookie, { 'x-csrf-token': s.csrf })({
      method: 'POST',
      url: '/use_cases',
      payload: body,
    })
    expect(noOrigin.statusCode).toBe(403)
    const list = await t.as('acme', 'read')({ method: 'GET', url: '/use_cases?q=Chatbot' })
    expect(list.json().items).toEqual([])

    const ok = await writer(t, s)({ method: 'POST', url: '/use_cases', payload: body })
    expect(ok.statusCode, ok.body).toBe(201)
    expect(ok.json().creator_id).toBe(s.userId)
  })

  it('records the person as the actor: audit records, workflow moves, evidence, actor_id=', async () => {
    await createPerson(t, 'fay@example.com', 'write')
    const s = await signIn(t, 'fay@example.com')
    const uc = await writer(t, s)({ method: 'POST', url: '/use_cases', payload: { name: 'Fraud scoring' } })
    const advanced = await writer(t, s)({ method: 'POST', url: `/use_cases/${uc.json().id}/workflow/advance` })
    expect(advanced.statusCode, advanced.body).toBe(200)
    const ev = await writer(
      t,
      s,
    )({
      method: 'POST',
      url: '/evidence',
      payload: { kind: 'link', url: 'https://example.com/dpia.pdf', title: 'DPIA' },
    })
    expect(ev.statusCode, ev.body).toBe(201)
    expect(ev.json().created_by).toBe(s.userId)
    const mine = await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs?actor_id=${s.userId}&sort=created_at` })
    const actions = mine.json().items.map((r: { action: string }) => r.action)
    expect(actions).toEqual(expect.arrayContaining(['session.created', 'use_case.created', 'evidence.created']))
    expect(actions.some((a: string) => a.startsWith('use_case.workflow'))).toBe(true)
    for (const record of mine.json().items) {
      expect(record.actor).toEqual({ type: 'user', id: s.userId, name: 'Person fay@example.com' })
      expect(record.source).toBe('api')
    }
  })

  it("shows the person as answered_by and in the dossier's history", async () => {
    await createPerson(t, 'gil@example.com', 'write')
    const s = await signIn(t, 'gil@example.com')
    const q = await t.as('acme', 'write')({
      method: 'POST',
      url: '/questionnaires',
      payload: { key: 'INTAKE', name: 'Intake', target: 'use_case', sections: INTAKE_SECTIONS },
    })
    expect(q.statusCode, q.body).toBe(201)
    const uc = (await writer(t, s)({ method: 'POST', url: '/use_cases', payload: { name: 'Loan ranking' } })).json()
    await writer(t, s)({ method: 'POST', url: `/use_cases/${uc.id}/questionnaires`, payload: { key: 'INTAKE' } })
    const put = await writer(t, s)({
      method: 'PUT',
      url: `/use_cases/${uc.id}/questionnaires/INTAKE/answers`,
      payload: { answers: [{ question_id: 'decision', value: 'Ranks loan applications' }] },
    })
    expect(put.statusCode, put.body).toBe(200)
    expect(put.json().answers[0].answered_by).toBe(s.userId)
    await writer(t, s)({ method: 'POST', url: `/use_cases/${uc.id}/workflow/advance` })
    const dossier = await asSession(t, s.cookie)({ method: 'GET', url: `/use_cases/${uc.id}/dossier` })
    expect(dossier.statusCode, dossier.body).toBe(200)
    expect(JSON.stringify(dossier.json())).toContain(s.userId)
    const html = await asSession(t, s.cookie)({ method: 'GET', url: `/use_cases/${uc.id}/dossier?format=html` })
    expect(html.body).toContain('Person gil@example.com')
  })

  it('a person acts with their role: read cannot write, and only an admin gives roles', async () => {
    const id = await createPerson(t, 'gus@example.com', 'read')
    const s = await signIn(t, 'gus@example.com')
    expect((await asSession(t, s.cookie)({ method: 'GET', url: '/use_cases' })).statusCode).toBe(200)
    const denied = await writer(t, s)({ method: 'POST', url: '/use_cases', payload: { name: 'Not mine to make' } })
    expect(denied.statusCode).toBe(403)
    expect(denied.json().detail).toContain('this person has role "read"')
    const byWriter = await t.as('acme', 'write')({ method: 'PATCH', url: `/users/${id}`, payload: { role: 'admin' } })
    expect(byWriter.statusCode).toBe(403)
    const byAdmin = await t.as('acme', 'admin')({ method: 'PATCH', url: `/users/${id}`, payload: { role: 'write' } })
    expect(byAdmin.statusCode, byAdmin.body).toBe(200)
    expect(byAdmin.json().role).toBe('write')
    // The session's role is the person's role now.
    expect(
      (await writer(t, s)({ method: 'POST', url: '/use_cases', payload: { name: 'Now mine to make' } })).statusCode,
    ).toBe(201)
    expect(
      (await t.as('acme', 'read')({ method: 'GET', url: '/users?role=write' }))
        .json()
        .items.map((u: { id: string }) => u.id),
    ).toContain(id)
  })

  it('signs out: the session ends at once and the cookie is cleared; sign-out needs this service as Origin', async () => {
    await createPerson(t, 'hal@example.com', 'read')
    const s = await signIn(t, 'hal@example.com')
    const foreign = await asSession(t, s.cookie, { origin: 'https://evil.example' })({
      method: 'POST',
      url: '/auth/logout',
    })
    expect(foreign.statusCode).toBe(403)
    expect((await asSession(t, s.cookie)({ method: 'GET', url: '/me' })).statusCode).toBe(200)
    const out = await asSession(t, s.cookie, { origin: ORIGIN })({ method: 'POST', url: '/auth/logout' })
    expect(out.statusCode).toBe(204)
    const cleared = out.cookies.find((c) => c.name === 'aigov_session')!
    expect(cleared.value).toBe('')
    const after = await asSession(t, s.cookie)({ method: 'GET', url: '/me' })
    expect(after.statusCode).toBe(401)
    expect(after.json().code).toBe('unauthorized')
  })

  it("admins list and end sessions; others cannot, and another tenant's session is 404", async () => {
    await createPerson(t, 'ivy@example.com', 'write')
    const s = await signIn(t, 'ivy@example.com')
    const list = await t.as('acme', 'admin')({ method: 'GET', url: `/sessions?user_id=${s.userId}` })
    expect(list.statusCode).toBe(200)
    expect(list.json().items).toHaveLength(1)
    expect(list.json().items[0]).toMatchObject({
      id: s.sessionId,
      method: 'link',
      user: { id: s.userId, email: 'ivy@example.com' },
    })
    expect((await t.as('acme', 'write')({ method: 'GET', url: '/sessions' })).statusCode).toBe(403)
    expect((await writer(t, s)({ method: 'DELETE', url: `/sessions/${s.sessionId}` })).statusCode).toBe(403)
    expect((await t.as('globex', 'admin')({ method: 'DELETE', url: `/sessions/${s.sessionId}` })).statusCode).toBe(404)
    expect((await t.as('acme', 'admin')({ method: 'DELETE', url: `/sessions/${s.sessionId}` })).statusCode).toBe(204)
    expect((await asSession(t, s.cookie)({ method: 'GET', url: '/me' })).statusCode).toBe(401)
    const revoked = await t.as(
      'acme',
      'read',
    )({ method: 'GET', url: `/audit_logs?action=session.revoked&resource_id=${s.sessionId}` })
    expect(revoked.json().items[0].actor.type).toBe('api_key')
  })

  it('ends a session past its idle timeout or its absolute end', async () => {
    await createPerson(t, 'jo@example.com', 'read')
    const idle = await signIn(t, 'jo@example.com')
    const old = await signIn(t, 'jo@example.com')
    const { db } = t.deps.database
    await db
      .updateTable('sessions')
      .set({ last_seen_at: new Date(Date.now() - 12 * 3600_000 - 1000).toISOString() })
      .where('id', '=', idle.sessionId)
      .execute()
    await db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', old.sessionId)
      .execute()
    expect((await asSession(t, idle.cookie)({ method: 'GET', url: '/me' })).statusCode).toBe(401)
    expect((await asSession(t, old.cookie)({ method: 'GET', url: '/me' })).statusCode).toBe(401)
    expect(
      (await t.as('acme', 'admin')({ method: 'GET', url: `/sessions?user_id=${idle.userId}` })).json().items,
    ).toEqual([])
  })

  it('keeps at most 20 sessions per person: signing in once more ends the oldest', async () => {
    await createPerson(t, 'kim@example.com', 'read')
    const first = await signIn(t, 'kim@example.com')
    for (let i = 0; i < 20; i++) await signIn(t, 'kim@example.com')
    expect((await asSession(t, first.cookie)({ method: 'GET', url: '/me' })).statusCode).toBe(401)
    const all = await t.as('acme', 'admin')({ method: 'GET', url: `/sessions?user_id=${first.userId}&page_limit=100` })
    expect(all.json().items).toHaveLength(20)
  })

  it('a session of one tenant reaches only that tenant', async () => {
    await createPerson(t, 'lee@example.com', 'admin', 'globex')
    const s = await signIn(t, 'lee@example.com', 'globex')
    const acmeCase = await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'Acme only' } })
    expect((await asSession(t, s.cookie)({ method: 'GET', url: `/use_cases/${acmeCase.json().id}` })).statusCode).toBe(
      404,
    )
    expect((await asSession(t, s.cookie, { 'x-tenant': 'acme' })({ method: 'GET', url: '/me' })).statusCode).toBe(403)
  })

  it('the link command refuses an unknown email and hides link tokens from logs', async () => {
    await expect(linkFor(t, 'nobody@example.com')).rejects.toMatchObject({ code: 'not_found' })
    expect(redactQuery('/auth/link/abcDEF123_-?x=1')).toBe('/auth/link/[redacted]?x=1')
  })
})

describeEachDialect('people sign in: limits and HTTPS', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect, {
      RATE_LIMIT_TOKEN_PER_MINUTE: '3',
      SERVICE_PUBLIC_URL: 'https://governance.example.com',
    })
    await t.apiKey('acme', 'admin')
  })
  afterAll(async () => t?.close())

  it('sets a Secure cookie behind HTTPS and limits sign-in attempts per address', async () => {
    await createPerson(t, 'ada@example.com', 'read')
    const token = await linkFor(t, 'ada@example.com')
    const res = await t.app.inject({ method: 'GET', url: `/auth/link/${token}` })
    expect(res.statusCode).toBe(303)
    expect(res.cookies[0].secure).toBe(true)
    const guesses = []
    for (let i = 0; i < 3; i++)
      guesses.push((await t.app.inject({ method: 'GET', url: `/auth/link/guess${i}` })).statusCode)
    expect(guesses).toEqual([400, 400, 429])
    // Another address still signs in.
    const other = await t.app.inject({ method: 'GET', url: '/auth/link/guess', remoteAddress: '10.9.8.7' })
    expect(other.statusCode).toBe(400)
  })

  it('takes the Origin of SERVICE_PUBLIC_URL for cookie writes', async () => {
    await createPerson(t, 'bo@example.com', 'write')
    const token = await linkFor(t, 'bo@example.com')
    const res = await t.app.inject({ method: 'GET', url: `/auth/link/${token}`, remoteAddress: '10.1.1.1' })
    const cookie = res.cookies[0].value
    const me = await t.app.inject({
      method: 'GET',
      url: `${PREFIX}/me`,
      headers: { cookie: `aigov_session=${cookie}` },
    })
    const write = (origin: string) =>
      t.app.inject({
        method: 'POST',
        url: `${PREFIX}/use_cases`,
        payload: { name: `From ${origin}` },
        headers: { cookie: `aigov_session=${cookie}`, origin, 'x-csrf-token': me.json().csrf_token },
      })
    expect((await write('http://localhost:80')).statusCode).toBe(403)
    expect((await write('https://governance.example.com')).statusCode).toBe(201)
  })
})

describe('sessions settings', () => {
  it('refuses a SERVICE_PUBLIC_URL with a path', async () => {
    const { loadConfig } = await import('../../../src/config.js')
    expect(() => loadConfig({ SERVICE_PUBLIC_URL: 'https://x.example/app' })).toThrow(/SERVICE_PUBLIC_URL/)
    expect(loadConfig({ SERVICE_PUBLIC_URL: 'https://x.example/' }).publicUrl).toBe('https://x.example')
    expect(() => loadConfig({ SESSION_IDLE_HOURS: '0' })).toThrow(/SESSION_IDLE_HOURS/)
    expect(loadConfig({ SESSION_MAX_DAYS: '30' }).sessionMaxMs).toBe(30 * 86_400_000)
  })
})
