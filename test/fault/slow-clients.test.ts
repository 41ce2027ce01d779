import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'

// Clients that send slowly, forever, or too much must not tie up the server: each is cut off by a timeout or
// a 413, and everyone else keeps being served in the meantime.

const P = '/api/v1/integration'
const TENANT = 'slow'
const KEY = 'sk_slow_clients_admin_key_0123456789abcdefghijklmno'

interface RawClient {
  socket: Socket
  /** Everything the server sent. */
  received(): string
  /** Resolves with the ms from open to the server closing the connection. */
  closed: Promise<number>
}

function openRaw(port: number): RawClient {
  const started = Date.now()
  const socket = connect(port, '127.0.0.1')
  let data = ''
  socket.on('data', (chunk) => (data += chunk.toString('latin1')))
  socket.on('error', () => undefined)
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)))
  return { socket, received: () => data, closed }
}

describe('fault: slow, endless and oversized clients', () => {
  let db: TestDatabase
  let service: ServiceProcess
  let token: string

  beforeAll(async () => {
    db = await freshDatabase('sqlite')
    service = await startServiceProcess({
      ...db.env,
      SERVICE_JWT_SECRET: 'slow-clients-secret-0123456789abcdefghij',
      SERVICE_API_KEY: KEY,
      SERVICE_TENANT: TENANT,
      SERVICE_STARTER_LIBRARY: 'false',
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_TOKEN_PER_MINUTE: '1000000',
    })
    const res = await fetch(`${service.baseUrl}${P}/auth/token`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'x-tenant': TENANT },
    })
    token = ((await res.json()) as { access_token: string }).access_token
  }, 30_000)
  afterAll(async () => {
    await service?.stop('SIGKILL')
    await db?.drop()
  })

  /** Meanwhile-probe: well-behaved requests during the attack; returns the slowest answer in ms. */
  const serveOthers = async (until: Promise<unknown>) => {
    let done = false
    void until.finally(() => (done = true))
    let slowest = 0
    let count = 0
    while (!done) {
      const started = Date.now()
      const [live, list] = await Promise.all([
        fetch(`${service.baseUrl}/livez`),
        fetch(`${service.baseUrl}${P}/use_cases?page_limit=5`, { headers: { authorization: `Bearer ${token}` } }),
      ])
      expect(live.status).toBe(200)
      expect(list.status).toBe(200)
      await list.arrayBuffer()
      slowest = Math.max(slowest, Date.now() - started)
      count++
      await new Promise((r) => setTimeout(r, 100))
    }
    return { slowest, count }
  }

  it('times out clients that trickle their headers or their body (slowloris), serving others meanwhile', async () => {
    const trickling: RawClient[] = []
    const timers: NodeJS.Timeout[] = []
    for (let i = 0; i < 100; i++) {
      const client = openRaw(service.port)
      trickling.push(client)
      if (i % 2 === 0) {
        // Headers that never end: one more header line every 500 ms.
        client.socket.write(`GET ${P}/use_cases HTTP/1.1\r\nHost: x\r\n`)
        let n = 0
        timers.push(setInterval(() => client.socket.writable && client.socket.write(`X-Slow-${n++}: y\r\n`), 500))
      } else {
        // A body that never completes: promised 100 000 bytes, one byte every 500 ms.
        client.socket.write(
          `POST ${P}/use_cases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
        )
        timers.push(setInterval(() => client.socket.writable && client.socket.write(' '), 500))
      }
    }
    const allClosed = Promise.all(trickling.map((c) => c.closed))
    const others = await serveOthers(allClosed)
    const closedAfter = await allClosed
    timers.forEach(clearInterval)

    for (const [i, ms] of closedAfter.entries()) {
      const limit = i % 2 === 0 ? HEADERS_TIMEOUT_MS : REQUEST_TIMEOUT_MS
      expect(ms).toBeGreaterThanOrEqual(limit - 500)
      expect(ms).toBeLessThan(limit + 3000)
      expect(trickling[i].received()).toMatch(/^(HTTP\/1\.1 408|$)/)
    }
    expect(others.count).toBeGreaterThan(10)
    expect(others.slowest).toBeLessThan(1000)
  }, 25_000)

  it('answers an endless chunked body with 413 once it passes 1 MiB, and a too-large Content-Length at once', async () => {
    const endless = openRaw(service.port)
    endless.socket.write(
      `POST ${P}/use_cases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    )
    const chunk = Buffer.alloc(64 * 1024, 'a')
    let sent = 0
    const pump = setInterval(() => {
      if (!endless.socket.writable || endless.received().length > 0) return
      for (let i = 0; i < 4; i++) {
        endless.socket.write(`${chunk.length.toString(16)}\r\n`)
        endless.socket.write(chunk)
        endless.socket.write('\r\n')
        sent += chunk.length
      }
    }, 5)
    const answered = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (endless.received().includes('\r\n\r\n')) {
          clearInterval(check)
          resolve()
        }
      }, 5)
    })
    const others = await serveOthers(Promise.race([answered, new Promise((r) => setTimeout(r, 10_000))]))
    clearInterval(pump)
    expect(endless.received()).toMatch(/^HTTP\/1\.1 413 /)
    expect(endless.received()).toContain('"code":"payload_too_large"')
    expect(sent).toBeGreaterThanOrEqual(1024 * 1024)
    expect(sent).toBeLessThan(8 * 1024 * 1024)
    // The server stops reading and closes the connection rather than draining forever.
    const closedIn = await Promise.race([endless.closed, new Promise<number>((r) => setTimeout(() => r(-1), 5000))])
    expect(closedIn).toBeGreaterThan(0)
    expect(others.slowest).toBeLessThan(1000)

    const declared = openRaw(service.port)
    declared.socket.write(
      `POST ${P}/use_cases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n{"name":`,
    )
    await Promise.race([declared.closed, new Promise((r) => setTimeout(r, 3000))])
    expect(declared.received()).toMatch(/^HTTP\/1\.1 413 /)
    declared.socket.destroy()
  }, 20_000)
})
