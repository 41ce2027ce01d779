import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { STATIC_PAGE_CSP } from '../../src/http/plugins/html-security.js'
import { startTestApp, type TestApp } from '../helpers/harness.js'

// Every HTML answer carries a Content-Security-Policy that forbids framing, X-Frame-Options, Referrer-Policy and
// nosniff, set in one place; the dossier page repeats its policy in the page, so a saved copy keeps it.

const expectPageHeaders = (headers: Record<string, unknown>) => {
  expect(headers['content-security-policy']).toMatch(/frame-ancestors 'none'/)
  expect(headers['x-frame-options']).toBe('DENY')
  expect(headers['referrer-policy']).toBe('no-referrer')
  expect(headers['x-content-type-options']).toBe('nosniff')
}

describe('HTML answers', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp('sqlite')
  })
  afterAll(async () => t?.close())

  it('the dossier page has its policy as a header and in the page, on a fresh and on a cached answer', async () => {
    const uc = (
      await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'Printable <b>' } })
    ).json()
    for (const attempt of ['rendered', 'cached']) {
      const res = await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${uc.id}/dossier?format=html` })
      expect(res.statusCode, attempt).toBe(200)
      expectPageHeaders(res.headers)
      expect(res.headers['content-security-policy']).toBe(`${STATIC_PAGE_CSP}; frame-ancestors 'none'`)
      const meta = res.body.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/)
      expect(meta, attempt).not.toBeNull()
      expect(meta![1].replaceAll('&#39;', "'")).toBe(STATIC_PAGE_CSP)
      // The policy is in <head> before anything it governs.
      expect(res.body.indexOf('http-equiv')).toBeLessThan(res.body.indexOf('<style>'))
    }
    // JSON answers are not pages: no page headers.
    const json = await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${uc.id}/dossier` })
    expect(json.headers['x-frame-options']).toBeUndefined()
  })

  it('/docs allows its own scripts (the inline one by hash) and nothing from elsewhere, and is never framed', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' })
    expect(res.statusCode).toBe(200)
    expectPageHeaders(res.headers)
    const policy = String(res.headers['content-security-policy'])
    const inline = [...res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].filter(
      (m) => !m[1].includes('src='),
    )
    expect(inline.length).toBeGreaterThan(0)
    for (const script of inline)
      expect(policy).toContain(`'sha256-${createHash('sha256').update(script[2]).digest('base64')}'`)
    expect(policy).toMatch(/default-src 'none'/)
    expect(policy).not.toMatch(/unsafe-eval|https?:|\*/)
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/)
    // The script file itself is not a page.
    const script = await t.app.inject({ method: 'GET', url: '/docs/js/scalar.js' })
    expect(script.statusCode).toBe(200)
    expect(script.headers['x-frame-options']).toBeUndefined()
  })
})
