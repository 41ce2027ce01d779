import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliDecompressSync } from 'node:zlib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { findConsoleDir } from '../../src/modules/console/console.routes.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'

// The console as the service serves it: its pages, its policy, its files, and `/` sending browsers there.

const dir = findConsoleDir()

describeEachDialect('console serving', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    if (!dir) throw new Error('console/dist is missing: run `npm run build` first')
    t = await startTestApp(dialect)
  })
  afterAll(() => t?.close())

  it('serves the application with a strict policy: own scripts only, no inline script, never framed', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    const csp = String(res.headers['content-security-policy'])
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toMatch(/script-src[^;]*unsafe/)
    expect(res.headers['cache-control']).toBe('no-cache')
    // Every script is a file of its own, from this service.
    const scripts = [...res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.length).toBeGreaterThan(0)
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/console\/assets\//)
      expect(body.trim()).toBe('')
    }
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  it('answers every page path of the application with its index, and unknown files with 404', async () => {
    for (const path of ['/console/use-cases/uc_01', '/console/sign-in?return_to=%2Fmodels', '/console/dashboard']) {
      const res = await t.app.inject({ method: 'GET', url: path })
      expect(res.statusCode, path).toBe(200)
      expect(res.body).toContain('<div id="root">')
    }
    expect((await t.app.inject({ method: 'GET', url: '/console/assets/nope-123.js' })).statusCode).toBe(404)
    expect((await t.app.inject({ method: 'GET', url: '/console/../package.json' })).statusCode).not.toBe(200)
  })

  it('serves the built files compressed and cacheable for good, identical to the build', async () => {
    const index = (await t.app.inject({ method: 'GET', url: '/console/' })).body
    const script = /src="\/console\/(assets\/[^"]+\.js)"/.exec(index)![1]
    const res = await t.app.inject({
      method: 'GET',
      url: `/console/${script}`,
      headers: { 'accept-encoding': 'br, gzip' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/javascript/)
    expect(res.headers['content-encoding']).toBe('br')
    expect(res.headers['cache-control']).toContain('immutable')
    expect(brotliDecompressSync(res.rawPayload).equals(readFileSync(join(dir!, script)))).toBe(true)
    const plain = await t.app.inject({
      method: 'GET',
      url: `/console/${script}`,
      headers: { 'accept-encoding': 'identity' },
    })
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(plain.rawPayload.equals(readFileSync(join(dir!, script)))).toBe(true)
  })

  it('sends a browser from / to the console, and tells other clients where things are', async () => {
    const browser = await t.app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html,application/xhtml+xml' },
    })
    expect(browser.statusCode).toBe(302)
    expect(browser.headers.location).toBe('/console/')
    const other = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } })
    expect(other.statusCode).toBe(200)
    expect(other.json()).toMatchObject({ console: '/console', api: '/api/v1/integration' })
    const bare = await t.app.inject({ method: 'GET', url: '/console' })
    expect([200, 301]).toContain(bare.statusCode)
    if (bare.statusCode === 301) expect(bare.headers.location).toBe('/console/')
  })
})
