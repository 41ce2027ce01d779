import { generateKeyPairSync } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'

// A real OpenID provider for the tests (oidc-provider, certified), on 127.0.0.1 with a random port, with its
// built-in development interactions (a login form that takes any password, then a consent form).

export interface TestAccount {
  email: string
  /** Left out, as Entra ID does (which says xms_edov instead). */
  email_verified?: boolean
  xms_edov?: boolean
  name?: string
}

export interface TestProvider {
  issuer: string
  clientId: string
  clientSecret: string
  /** By account id (what the login form takes); change them between tests freely. */
  accounts: Map<string, TestAccount>
  close(): Promise<void>
}

export async function startOidcProvider(
  redirectUris: string[],
  accounts: Record<string, TestAccount> = {},
): Promise<TestProvider> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end()
  const server = createServer((req, res) => handler(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const known = new Map(Object.entries(accounts))
  const clientId = 'aigov-test'
  const clientSecret = 'a-client-secret-for-the-tests-only'
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name'] },
    findAccount: async (_ctx, id) => {
      const account = known.get(id)
      if (!account) return undefined
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: account.email,
          ...(account.email_verified !== undefined && { email_verified: account.email_verified }),
          ...(account.xms_edov !== undefined && { xms_edov: account.xms_edov }),
          ...(account.name && { name: account.name }),
        }),
      }
    },
    cookies: { keys: ['oidc-provider-test-cookie-key'] },
    jwks: {
      keys: [
        { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig' },
      ],
    },
    ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    features: { devInteractions: { enabled: true } },
  })
  handler = provider.callback()
  return {
    issuer,
    clientId,
    clientSecret,
    accounts: known,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

interface StoredCookie {
  name: string
  value: string
  path: string
}

/**
 * A browser's cookies and redirects for fetch: cookies by host (not port, as browsers keep them) and path, and
 * each redirect followed by hand so a test sees every hop.
 */
export class Browser {
  private cookies = new Map<string, StoredCookie[]>()

  cookie(host: string, name: string): string | undefined {
    return this.cookies.get(host)?.find((c) => c.name === name)?.value
  }

  setCookie(host: string, name: string, value: string, path = '/'): void {
    const list = (this.cookies.get(host) ?? []).filter((c) => !(c.name === name && c.path === path))
    list.push({ name, value, path })
    this.cookies.set(host, list)
  }

  dropCookie(host: string, name: string): void {
    this.cookies.set(
      host,
      (this.cookies.get(host) ?? []).filter((c) => c.name !== name),
    )
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url)
    const sent = (this.cookies.get(target.hostname) ?? [])
      .filter(
        (c) => target.pathname === c.path || target.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`),
      )
      .map((c) => `${c.name}=${c.value}`)
    const headers = new Headers(init.headers)
    if (sent.length > 0) headers.set('cookie', sent.join('; '))
    const res = await fetch(target, { ...init, headers, redirect: 'manual' })
    for (const line of res.headers.getSetCookie()) this.store(target, line)
    return res
  }

  /** Follows redirects from `url` until a page answers; returns it and the URL it answered at. */
  async follow(
    url: string,
    init: RequestInit = {},
    stopAt?: (url: URL) => boolean,
  ): Promise<{ res: Response; url: string }> {
    let current = url
    let res = await this.fetch(current, init)
    for (let hops = 0; res.status >= 300 && res.status < 400 && hops < 20; hops++) {
      const next = new URL(res.headers.get('location')!, current)
      await res.arrayBuffer()
      if (stopAt?.(next)) return { res, url: next.href }
      current = next.href
      res = await this.fetch(current)
    }
    return { res, url: current }
  }

  private store(from: URL, line: string): void {
    const [pair, ...attrs] = line.split(';').map((p) => p.trim())
    const eq = pair.indexOf('=')
    const name = pair.slice(0, eq)
    const value = pair.slice(eq + 1)
    let path = '/'
    let gone = value === ''
    for (const attr of attrs) {
      const [k, v = ''] = attr.split('=')
      const key = k.toLowerCase()
      if (key === 'path') path = v
      if (key === 'max-age' && Number(v) <= 0) gone = true
      if (key === 'expires' && Date.parse(v) <= Date.now()) gone = true
    }
    const list = (this.cookies.get(from.hostname) ?? []).filter((c) => !(c.name === name && c.path === path))
    if (!gone) list.push({ name, value, path })
    this.cookies.set(from.hostname, list)
  }
}

/** The action and hidden fields of the first form on a page (the provider's login and consent forms). */
export function formOf(html: string, base: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html)
  if (!form) throw new Error(`no form on the page: ${html.slice(0, 500)}`)
  const fields: Record<string, string> = {}
  for (const m of form[2].matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g))
    fields[m[1]] = m[2]
  return { action: new URL(form[1].replace(/&amp;/g, '&'), base).href, fields }
}
