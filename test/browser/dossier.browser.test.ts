import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INTAKE_SECTIONS, multipart } from '../helpers/governance.js'
import { PREFIX, startTestApp, type TestApp } from '../helpers/harness.js'
import { publishedControl } from '../helpers/policy.js'

// The dossier's printable page, opened in a real headless browser: every section renders, nothing is fetched.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const hasBrowser = existsSync(CHROMIUM)

describe.skipIf(!hasBrowser)(
  `dossier page in headless Chromium${hasBrowser ? '' : ` — skipped: no browser at ${CHROMIUM}`}`,
  () => {
    let t: TestApp
    let base: string
    let useCaseId: string
    beforeAll(async () => {
      t = await startTestApp('sqlite')
      base = await t.app.listen({ port: 0, host: '127.0.0.1' })
      const write = t.as('acme', 'write')
      await publishedControl(t, 'acme', 'OVERSIGHT', {
        name: 'Human oversight',
        evidence_requirements: [{ type: 'file', description: 'Oversight procedure', required: true }],
      })
      await write({
        method: 'POST',
        url: '/policy_packs',
        payload: { key: 'CORE', name: 'Core controls', controls: [{ key: 'OVERSIGHT' }] },
      })
      await write({
        method: 'POST',
        url: '/questionnaires',
        payload: { key: 'INTAKE', name: 'AI intake', target: 'use_case', sections: INTAKE_SECTIONS },
      })
      const uc = (
        await write({
          method: 'POST',
          url: '/use_cases',
          payload: {
            name: 'Credit scoring',
            description: 'Scores retail credit applications.',
            risk_category_level: 'high',
            regions: ['EU'],
          },
        })
      ).json()
      useCaseId = uc.id
      await write({ method: 'POST', url: `/use_cases/${uc.id}/questionnaires`, payload: { key: 'INTAKE' } })
      await write({ method: 'POST', url: `/use_cases/${uc.id}/policy_packs`, payload: { key: 'CORE' } })
      const model = (
        await write({
          method: 'POST',
          url: '/models',
          payload: { name: 'Scorer v3', provider: 'In-house', version: '3.1' },
        })
      ).json()
      await write({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: model.id } })
      await write({
        method: 'PUT',
        url: `/use_cases/${uc.id}/questionnaires/INTAKE/answers`,
        payload: {
          answers: [
            { question_id: 'decision', value: 'Approves or declines credit limits' },
            { question_id: 'personal_data', value: true },
            { question_id: 'autonomy', value: 'human-in-the-loop' },
          ],
        },
      })
      await write({ method: 'POST', url: `/use_cases/${uc.id}/workflow/advance` })
      const { body, contentType } = multipart([
        { name: 'file', value: 'Procedure text', filename: 'oversight-procedure.pdf', type: 'application/pdf' },
        { name: 'title', value: 'Oversight procedure' },
      ])
      const ev = (
        await write({ method: 'POST', url: '/evidence', payload: body, headers: { 'content-type': contentType } })
      ).json()
      const control = (await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${uc.id}/controls` })).json()
        .items[0]
      await write({
        method: 'POST',
        url: `/use_cases/${uc.id}/controls/${control.id}/evidence`,
        payload: { evidence_id: ev.id },
      })
      await write({
        method: 'PATCH',
        url: `/use_cases/${uc.id}/controls/${control.id}`,
        payload: { status: 'implemented', notes: 'Tested on 2026-11-20.' },
      })
    })
    afterAll(async () => t?.close())

    it('renders every section without fetching anything, and prints', async () => {
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
        const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } })
        await page.setExtraHTTPHeaders({ authorization: `Bearer ${await t.token('acme', 'read')}` })
        const url = `${base}${PREFIX}/use_cases/${useCaseId}/dossier?format=html`
        const requests: string[] = []
        page.on('request', (req) => requests.push(req.url()))
        const res = await page.goto(url, { waitUntil: 'load', timeout: 15_000 })
        expect(res?.status()).toBe(200)
        expect(requests).toEqual([url])
        expect(await page.title()).toBe('Dossier: Credit scoring')
        const headings = await page.locator('section h2').allTextContents()
        expect(headings).toEqual([
          'Summary',
          'Workflow',
          'Open items',
          'Models',
          'Vendors',
          'Risk scenarios',
          'Policy packs',
          'Controls',
          'Questionnaires',
          'Evidence index',
        ])
        await expect.poll(() => page.locator('#controls').innerText()).toContain('OVERSIGHT v1')
        expect(await page.locator('#controls').innerText()).toContain('Oversight procedure')
        expect(await page.locator('#questionnaires').innerText()).toContain('Approves or declines credit limits')
        expect(await page.locator('#models').innerText()).toContain('Scorer v3')
        expect(await page.locator('#workflow').innerText()).toContain('workflow_advanced')
        await page.screenshot({ path: join(tmpdir(), 'dossier.png'), fullPage: true })
        await page.emulateMedia({ media: 'print' })
        expect(await page.locator('nav').isVisible()).toBe(false)
        const pdf = await page.pdf({ format: 'A4' })
        expect(pdf.subarray(0, 4).toString()).toBe('%PDF')
      } finally {
        await browser.close()
      }
    }, 45_000)
  },
)
