import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../src/index.js'

// Session mode, as the console uses it: seen from a real socket, what the client sends and what it never sends.

let server: Server
let baseUrl: string
const seen: { method: string; url: string; headers: IncomingHttpHeaders }[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers })
    req.resume()
    req.on('end', () => {
      if (req.url?.includes('/use_cases/uc_gone')) {
        res.writeHead(401, { 'content-type': 'application/problem+json' })
        return res.end(
          JSON.stringify({ status: 401, code: 'unauthorized', title: 'Unauthorized', detail: 'signed out' }),
        )
      }
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id: 'uc_1', name: 'Credit scoring' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe('client in session mode', () => {
  it('exchanges no token, sends no Authorization or X-Tenant, and puts X-CSRF-Token on writes only', async () => {
    seen.length = 0
    let csrf = 'csrf-1'
    const client = createClient({ baseUrl, session: { csrfToken: () => csrf } })
    expect((await client.useCases.get('uc_1')).data).toMatchObject({ id: 'uc_1' })
    expect((await client.useCases.create({ name: 'Credit scoring' })).error).toBeNull()
    csrf = 'csrf-2'
    await client.useCases.update('uc_1', { description: 'x' })
    expect(seen.map((s) => s.method)).toEqual(['GET', 'POST', 'PATCH'])
    expect(seen.some((s) => s.url.includes('/auth/token'))).toBe(false)
    for (const s of seen) {
      expect(s.headers.authorization).toBeUndefined()
      expect(s.headers['x-tenant']).toBeUndefined()
    }
    expect(seen[0].headers['x-csrf-token']).toBeUndefined()
    expect(seen[1].headers['x-csrf-token']).toBe('csrf-1')
    expect(seen[2].headers['x-csrf-token']).toBe('csrf-2')
  })

  it('gives an ended session back as an authentication error, without retrying it', async () => {
    seen.length = 0
    const client = createClient({ baseUrl, session: { csrfToken: () => 'c' } })
    const res = await client.useCases.get('uc_gone')
    expect(res.error).toMatchObject({ kind: 'authentication', status: 401 })
    expect(seen).toHaveLength(1)
  })
})
