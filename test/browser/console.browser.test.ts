import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../helpers/eventually.js'
import { INTAKE_SECTIONS } from '../helpers/governance.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'
import { publishedControl } from '../helpers/policy.js'
import { runCli } from '../helpers/process.js'

// The console end to end in headless Chromium against the real service: one browser for the file, one context per
// person, axe-core on every page, and no Content-Security-Policy violation anywhere.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const hasBrowser = existsSync(CHROMIUM)
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const EVIDENCE = Buffer.from('Human oversight procedure\nStep 1: a person reviews every declined application.\n')
const TRAINING = Buffer.from('Training record: reviewers trained on 2026-11-30.\n')

let browser: Browser
beforeAll(async () => {
  if (!hasBrowser) return
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  })
})
afterAll(async () => {
  await browser?.close()
})

/** A person's browser: records every CSP violation the page reports. */
async function newContext(base: string): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } })
  await context.addInitScript(() => {
    const w = window as unknown as { __csp: string[] }
    w.__csp = []
    document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`))
  })
  return context
}

/** axe-core's serious and critical findings on the page as it is, plus any CSP violation so far. */
async function audit(page: Page): Promise<{ axe: unknown[]; csp: string[] }> {
  await page.evaluate(AXE)
  const axe = await page.evaluate(async () => {
    const run = (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            o: object,
          ) => Promise<{ violations: { id: string; impact: string; nodes: { target: unknown }[] }[] }>
        }
      }
    ).axe.run
    const result = await run(document, { resultTypes: ['violations'] })
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target) }))
  })
  const csp = await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp)
  return { axe, csp }
}

async function expectClean(page: Page, where: string) {
  const found = await audit(page)
  expect(found.csp, `${where}: CSP violations`).toEqual([])
  expect(found.axe, `${where}: serious accessibility violations ${JSON.stringify(found.axe)}`).toEqual([])
}

describe.skipIf(!hasBrowser)(
  `console in headless Chromium${hasBrowser ? '' : ` — skipped: no browser at ${CHROMIUM}`}`,
  () => {
    describeEachDialect('console', (dialect) => {
      let t: TestApp
      let base: string
      let useCaseId: string
      let controlId: string
      let person: { id: string; email: string; name: string }

      beforeAll(async () => {
        t = await startTestApp(dialect)
        base = await t.app.listen({ port: 0, host: '127.0.0.1' })
        const admin = t.as('acme', 'admin')
        const ok = async (p: Promise<{ statusCode: number; body: string; json(): any }>, status = 201) => {
          const res = await p
          expect(res.statusCode, res.body).toBe(status)
          return res.json()
        }
        person = await ok(
          admin({
            method: 'POST',
            url: '/users',
            payload: { email: 'ada@example.com', name: 'Ada Lovelace', role: 'write' },
          }),
        )
        await publishedControl(t, 'acme', 'OVERSIGHT', {
          name: 'Human oversight',
          evidence_requirements: [
            { type: 'file', description: 'Oversight procedure', required: true },
            { type: 'file', description: 'Reviewer training record', required: true },
          ],
        })
        await ok(
          admin({
            method: 'POST',
            url: '/policy_packs',
            payload: { key: 'CORE', name: 'Core controls', controls: [{ key: 'OVERSIGHT' }] },
          }),
        )
        await ok(
          admin({
            method: 'POST',
            url: '/questionnaires',
            payload: { key: 'INTAKE', name: 'AI intake', target: 'use_case', sections: INTAKE_SECTIONS },
          }),
        )
        const uc = await ok(
          admin({
            method: 'POST',
            url: '/use_cases',
            payload: {
              name: 'Credit scoring',
              description: 'Scores retail credit applications.',
              risk_category_level: 'high',
              owner: { owner_id: person.id, owner_type: 'user' },
            },
          }),
        )
        useCaseId = uc.id
        await ok(admin({ method: 'POST', url: `/use_cases/${uc.id}/questionnaires`, payload: { key: 'INTAKE' } }))
        await ok(admin({ method: 'POST', url: `/use_cases/${uc.id}/policy_packs`, payload: { key: 'CORE' } }))
        const controls = await ok(admin({ method: 'GET', url: `/use_cases/${uc.id}/controls` }), 200)
        controlId = controls.items[0].id
        await ok(
          admin({
            method: 'PATCH',
            url: `/use_cases/${uc.id}/controls/${controlId}`,
            payload: { assignee: { owner_id: person.id } },
          }),
          200,
        )
      })
      afterAll(() => t?.close())

      /** Signs the person in with a one-time link from the CLI, as an operator without single sign-on gives one. */
      async function signIn(page: Page): Promise<void> {
        const out = runCli(['users', 'login-link', '--tenant', 'acme', '--email', person.email], {
          DATABASE_URL: t.config.databaseUrl,
          SERVICE_PUBLIC_URL: base,
          LOG_LEVEL: 'silent',
        })
        const link = /\/auth\/link\/[A-Za-z0-9_.~-]+/.exec(`${out.stdout}`)
        expect(link, `${out.stdout}${out.stderr}`).not.toBeNull()
        await page.goto(link![0])
        await page.waitForURL(/\/console\//)
      }

      it('shows the sign-in page to a person without a session, remembers the page, and is clean', async () => {
        const context = await newContext(base)
        const page = await context.newPage()
        await page.goto(`/console/use-cases/${useCaseId}`)
        await page.getByRole('heading', { name: 'Sign in to AI governance' }).waitFor()
        expect(page.url()).toContain(`/console/sign-in?return_to=${encodeURIComponent(`/use-cases/${useCaseId}`)}`)
        await page.getByText('Your session has ended').waitFor()
        await page.getByText('aigov users login-link').waitFor()
        await page.getByLabel('Organisation').fill('acme')
        const start = page.waitForRequest((r) => r.url().includes('/auth/oidc/start'))
        await page.getByRole('button', { name: 'Continue with single sign-on' }).click()
        const url = new URL((await start).url())
        expect(url.searchParams.get('tenant')).toBe('acme')
        expect(url.searchParams.get('return_to')).toBe(`/console/use-cases/${useCaseId}`)
        await page.goBack()
        await page.getByRole('heading', { name: 'Sign in to AI governance' }).waitFor()
        await expectClean(page, 'sign-in')
        await context.close()
      }, 120_000)

      it('takes a person from the inbox through the questionnaire, evidence and a refused gate to the dossier', async () => {
        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)

        // Inbox: the header names the person; the use case's questionnaire and control wait there.
        await page.getByRole('heading', { name: 'Inbox' }).waitFor()
        await expect.poll(() => page.getByTestId('who').textContent()).toBe('Ada Lovelace')
        await page.getByRole('link', { name: 'Answer “AI intake”' }).waitFor()
        await page.getByRole('link', { name: 'Control “Human oversight”' }).waitFor()
        await expectClean(page, 'inbox')
        // CONSOLE_SCREENSHOTS=1 refreshes the README's pictures (docs/console-*.png).
        if (process.env.CONSOLE_SCREENSHOTS) await page.screenshot({ path: 'docs/console-inbox.png' })
        await page.getByRole('link', { name: 'Answer “AI intake”' }).click()

        // The questionnaire, answered in place and saved as the person goes.
        await page.getByRole('heading', { name: 'Credit scoring', level: 1 }).waitFor()
        await expectClean(page, 'use case')
        await page.getByLabel('What does the system decide?').fill('Approves or declines credit limits')
        await page.getByLabel('What does the system decide?').press('Tab')
        await page.getByText('1 of 3 required answered').waitFor()
        await page.locator('#q-INTAKE-personal_data').click()
        await page.getByRole('option', { name: 'Yes' }).click()
        await page.getByText('2 of 3 required answered').waitFor()
        await page.locator('#q-INTAKE-autonomy').click()
        await page.getByRole('option', { name: 'human-in-the-loop' }).click()
        await page.getByText('3 of 3 required answered').waitFor()

        // A file as evidence of the control's first requirement.
        await page.locator(`#req-${controlId}-0 input[type=file]`).setInputFiles({
          name: 'oversight-procedure.txt',
          mimeType: 'text/plain',
          buffer: EVIDENCE,
        })
        await page.locator(`#req-${controlId}-0`).getByText('Evidence attached').waitFor()

        // Assessment is complete: the first move passes; the second is refused, naming what is missing as a link.
        await page.getByRole('button', { name: 'Move forward' }).click()
        await expect.poll(() => page.getByTestId('stage').textContent()).toContain('Collecting evidence')
        await page.getByRole('button', { name: 'Move forward' }).click()
        const missing = page.getByRole('alert').getByRole('link', { name: /Reviewer training record/ })
        await missing.waitFor()
        await expectClean(page, 'refused gate')
        await missing.click()
        expect(page.url()).toContain(`#req-${controlId}-1`)
        await page.locator(`#req-${controlId}-1 input[type=file]`).setInputFiles({
          name: 'training.txt',
          mimeType: 'text/plain',
          buffer: TRAINING,
        })
        await page.locator(`#req-${controlId}-1`).getByText('Evidence attached').waitFor()
        await page.getByRole('button', { name: 'Move forward' }).click()
        await expect.poll(() => page.getByTestId('stage').textContent()).toContain('Cleared')
        if (process.env.CONSOLE_SCREENSHOTS) {
          await page.evaluate(() => window.scrollTo(0, 0))
          await page.screenshot({ path: 'docs/console-use-case.png', fullPage: true })
        }

        // The dossier opens as its own printable page.
        const [dossier] = await Promise.all([
          context.waitForEvent('page'),
          page.getByRole('link', { name: 'Open the dossier' }).click(),
        ])
        await dossier.waitForLoadState()
        expect(await dossier.content()).toContain('Credit scoring')
        await dossier.close()

        // The API holds what the person did.
        const read = t.as('acme', 'read')
        const answers = (await read({ method: 'GET', url: `/use_cases/${useCaseId}/questionnaires/INTAKE` })).json()
        expect(
          Object.fromEntries(
            answers.answers.map((a: { question_id: string; value: unknown }) => [a.question_id, a.value]),
          ),
        ).toMatchObject({
          decision: 'Approves or declines credit limits',
          personal_data: true,
          autonomy: 'human-in-the-loop',
        })
        const control = (await read({ method: 'GET', url: `/use_cases/${useCaseId}/controls/${controlId}` })).json()
        const first = (
          await read({ method: 'GET', url: `/evidence/${control.evidence_requirements[0].evidence_ids[0]}` })
        ).json()
        expect(first.sha256).toBe(createHash('sha256').update(EVIDENCE).digest('hex'))
        expect(
          (await read({ method: 'GET', url: `/use_cases/${useCaseId}/workflow` })).json().workflow_stage_step,
        ).toBe('clear')
        {
          const audit = (
            await read({ method: 'GET', url: `/audit_logs?use_case_id=${useCaseId}&page_limit=100` })
          ).json()
          const byPerson = audit.items.filter(
            (a: { actor: { type: string; id: string; name: string } }) => a.actor.type === 'user',
          )
          expect(byPerson.length).toBeGreaterThan(3)
          for (const a of byPerson) expect(a.actor).toMatchObject({ id: person.id, name: 'Ada Lovelace' })
        }

        // Signing out ends the session: the console shows the sign-in page again, also after a reload.
        await page.getByRole('button', { name: 'Sign out' }).click()
        await page.getByText('You are signed out').waitFor()
        await page.goto('/console/')
        await page.getByRole('heading', { name: 'Sign in to AI governance' }).waitFor()
        await context.close()
      }, 120_000)

      it("shows another person's change on an open page without a reload, keeping what is being typed", async () => {
        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        await page.goto(`/console/use-cases/${useCaseId}`)
        await page.getByRole('heading', { name: 'Credit scoring', level: 1 }).waitFor()
        await page.getByLabel('How many people does it affect per month?').fill('1200')
        const res = await t.as(
          'acme',
          'admin',
        )({
          method: 'PATCH',
          url: `/use_cases/${useCaseId}`,
          payload: { description: 'Scores retail and small-business credit applications.' },
        })
        expect(res.statusCode, res.body).toBe(200)
        await page.getByText('Scores retail and small-business credit applications.').waitFor()
        await page.getByText('Changed by someone else').waitFor()
        await eventually(async () =>
          expect(await page.getByLabel('How many people does it affect per month?').inputValue()).toBe('1200'),
        )
        await context.close()
      }, 120_000)

      it('lists, filters and opens use cases in the registry, and draws the dashboard, keyboard and 375 px included', async () => {
        const context = await newContext(base)
        const page = await context.newPage()
        await page.setViewportSize({ width: 375, height: 800 })
        await signIn(page)
        await page.goto('/console/use-cases?risk=high')
        await page.getByTestId('registry-table').getByRole('link', { name: 'Credit scoring' }).waitFor()
        await expectClean(page, 'registry')
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
        expect(overflow).toBeLessThanOrEqual(0)
        await page.goto('/console/use-cases?risk=low')
        await page.getByText('Nothing matches.').waitFor()
        await page.goto('/console/dashboard')
        await page.getByRole('heading', { name: 'Use cases by risk level' }).waitFor()
        await expectClean(page, 'dashboard')
        await page.getByRole('link', { name: 'High: 1' }).focus()
        await page.keyboard.press('Enter')
        await page.waitForURL(/\/console\/use-cases\?risk=high/)
        await page.getByTestId('registry-table').getByRole('link', { name: 'Credit scoring' }).waitFor()
        await context.close()
      }, 120_000)
    })
  },
)
