import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/harness.js'

// The interactive reference at /docs, opened in a real headless browser: it must render the operations
// from the service's own document and scripts, without reaching the internet.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const hasBrowser = existsSync(CHROMIUM)

describe.skipIf(!hasBrowser)(
  `/docs in headless Chromium${hasBrowser ? '' : ` — skipped: no browser at ${CHROMIUM} (bash .ci/run installs Debian's chromium)`}`,
  () => {
    let t: TestApp
    let base: string
    beforeAll(async () => {
      t = await startTestApp('sqlite')
      base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    })
    afterAll(async () => t?.close())

    it('lists the use-case operations, loading everything from the service itself, and nothing sends anything away', async () => {
      const { chromium } = await import('playwright-core')
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
        ],
      })
      try {
        const page = await browser.newPage()
        const outside: string[] = []
        // Anything not served by the service is refused (and recorded): the page must not need it.
        await page.route('**/*', (route) => {
          const url = route.request().url()
          if (url.startsWith(base) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue()
          outside.push(url)
          return route.abort()
        })
        const errors: string[] = []
        page.on('pageerror', (err) => errors.push(err.message))
        // The page's Content-Security-Policy must let it work: the browser reports everything the policy blocks. The one
        // thing it blocks on purpose is eval: Scalar's bundled Zod probes for it (`try { Function('') }`) and, refused,
        // validates without compiling, so the page works the same and keeps eval out of reach of injected text.
        const violations: string[] = []
        page.on('console', (msg) => {
          if (/Content Security Policy|Refused to/i.test(msg.text())) violations.push(msg.text())
        })
        await page.addInitScript(() =>
          document.addEventListener('securitypolicyviolation', (e) =>
            console.error(`Refused to: CSP ${e.violatedDirective} ${e.blockedURI}`),
          ),
        )
        const evalProbe = (text: string) =>
          text === 'Refused to: CSP script-src eval' || /Refused to evaluate a string as JavaScript/.test(text)
        const res = await page.goto(`${base}/docs`, { waitUntil: 'load', timeout: 15_000 })
        expect(res?.status()).toBe(200)
        expect(res?.headers()['content-security-policy']).toMatch(/frame-ancestors 'none'/)
        // Groups start collapsed in the sidebar; opening "use cases" lists its operations.
        await page.getByText('use cases', { exact: true }).first().click({ timeout: 15_000 })
        for (const summary of [
          'List use cases',
          'Create a use case',
          'Get a use case',
          'Update a use case',
          'Delete a use case',
        ]) {
          await page.getByText(summary, { exact: true }).first().waitFor({ state: 'attached', timeout: 15_000 })
        }
        // Titled with the service's name, with its own icon.
        expect(await page.title()).toBe('AI Governance Integration API')
        const icons = await page.$$eval('link[rel~="icon"]', (links) => links.map((l) => (l as HTMLLinkElement).href))
        expect(icons).toEqual([`${base}/favicon.svg`])
        expect((await fetch(`${base}/favicon.svg`)).headers.get('content-type')).toBe('image/svg+xml')
        // The curl samples name this service's host (the document's servers entry).
        await page.getByText('Create a use case', { exact: true }).first().click()
        await page
          .getByText(`curl ${base}/api/v1/integration/use_cases`)
          .first()
          .waitFor({ state: 'attached', timeout: 15_000 })
        // Nothing that sends the document or a token away: Scalar's hosted client, the share/upload toolbar, downloads.
        const labels = await page.$$eval('button, a, [role="button"]', (els) =>
          els.map(
            (el) =>
              `${(el as HTMLElement).innerText} ${el.getAttribute('aria-label') ?? ''} ${el.getAttribute('href') ?? ''}`,
          ),
        )
        for (const forbidden of [
          /open api client/i,
          /\bshare\b/i,
          /upload/i,
          /download/i,
          /client\.scalar\.com/i,
          /deploy/i,
        ]) {
          expect(
            labels.filter((label) => forbidden.test(label)),
            String(forbidden),
          ).toEqual([])
        }
        // Links that leave the page go nowhere but Scalar's own credit (which carries no document or token).
        const hrefs = await page.$$eval('a[href]', (links) => links.map((l) => (l as HTMLAnchorElement).href))
        expect(hrefs.filter((href) => !href.startsWith(base) && !href.startsWith('https://www.scalar.com'))).toEqual([])
        expect(errors).toEqual([])
        expect(violations.filter((v) => !evalProbe(v))).toEqual([])
        expect(outside).toEqual([])
      } finally {
        await browser.close()
      }
    }, 45_000)
  },
)
