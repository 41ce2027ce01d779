import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

/** A real upstream: answers /readyz with the status set in `mode`, or never when 'hang'. */
async function upstream(): Promise<{ server: Server; url: string; mode: { value: 200 | 503 | 'hang' } }> {
  const mode = { value: 200 as 200 | 503 | 'hang' }
  const server = createServer((req, res) => {
    if (mode.value === 'hang') return
    res.writeHead(req.url === '/readyz' ? mode.value : 404).end('{}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, mode }
}

describeEachDialect('health', (dialect) => {
  let t: TestApp
  let up: Awaited<ReturnType<typeof upstream>>
  beforeAll(async () => {
    up = await upstream()
    t = await startTestApp(dialect, { SERVICE_SERVER_BASE_URL: up.url })
  })
  afterAll(async () => {
    await t.close()
    up.server.closeAllConnections()
    up.server.close()
  })

  it('livez answers without touching dependencies', async () => {
    up.mode.value = 'hang'
    const started = Date.now()
    const res = await t.app.inject({ method: 'GET', url: '/livez' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ message: true })
    expect(Date.now() - started).toBeLessThan(500)
  })

  it('readyz is 200 when the database and the upstream answer', async () => {
    up.mode.value = 200
    const res = await t.app.inject({ method: 'GET', url: '/readyz' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ message: true, checks: { database: 'ok', upstream: 'ok' } })
  })

  it('readyz is 503 naming the upstream when it answers 503', async () => {
    up.mode.value = 503
    const res = await t.app.inject({ method: 'GET', url: '/readyz' })
    expect(res.statusCode).toBe(503)
    expect(res.json()).toEqual({ message: false, checks: { database: 'ok', upstream: 'failing' } })
  })

  it('readyz gives up on a hanging upstream after about a second', async () => {
    up.mode.value = 'hang'
    const started = Date.now()
    const res = await t.app.inject({ method: 'GET', url: '/readyz' })
    const elapsed = Date.now() - started
    expect(res.statusCode).toBe(503)
    expect(res.json().checks).toEqual({ database: 'ok', upstream: 'timeout' })
    expect(elapsed).toBeGreaterThanOrEqual(900)
    expect(elapsed).toBeLessThan(1500)
  })
})
