import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../helpers/eventually.js'
import { INTAKE_SECTIONS } from '../helpers/governance.js'
import { describeEachDialect, startTestApp, type TestApp } from '../helpers/harness.js'
import { publishedControl } from '../helpers/policy.js'
import { runCliAsync } from '../helpers/process.js'

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

/** Presses Tab until `target` has the focus (as a keyboard-only person would), failing after `max` presses. */
async function tabTo(page: Page, target: ReturnType<Page['locator']>, max = 120): Promise<void> {
  await target.waitFor()
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    if (await target.evaluate((el) => el === document.activeElement || el.contains(document.activeElement))) return
  }
  throw new Error(`Tab never reached ${target}`)
}

/**
 * Opens the focused select with ArrowDown and moves to `option` with ArrowDown, then Enter: each press waits for the
 * list to show where it is (it highlights its first option a frame after opening), as a person watching it would.
 */
async function chooseWithKeys(page: Page, option: string): Promise<void> {
  await page.keyboard.press('ArrowDown')
  const highlighted = page.locator('[role=option][data-combobox-selected]')
  await highlighted.waitFor()
  for (let i = 0; i < 10 && (await highlighted.textContent()) !== option; i++) {
    const before = await highlighted.textContent()
    await page.keyboard.press('ArrowDown')
    await expect.poll(() => highlighted.textContent()).not.toBe(before)
  }
  expect(await highlighted.textContent()).toBe(option)
  await page.keyboard.press('Enter')
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
        // A 1 MB evidence limit: the refusal of a bigger file before sending is tested with small buffers.
        t = await startTestApp(dialect, { EVIDENCE_MAX_MB: '1' })
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
        const out = await runCliAsync(['users', 'login-link', '--tenant', 'acme', '--email', person.email], {
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
        await page.getByRole('heading', { name: 'History', level: 2 }).waitFor()
        await page.getByLabel('How many people does it affect per month?').fill('1200')
        // What the page reads after each change: only the section the change concerns (and the history).
        let reads: string[] = []
        page.on('request', (r) => {
          if (r.method() === 'GET')
            reads.push(new URL(r.url()).pathname.replace(`/api/v1/integration/use_cases/${useCaseId}`, ''))
        })
        const admin = t.as('acme', 'admin')
        const res = await admin({
          method: 'PATCH',
          url: `/use_cases/${useCaseId}`,
          payload: { description: 'Scores retail and small-business credit applications.' },
        })
        expect(res.statusCode, res.body).toBe(200)
        await page.getByText('Scores retail and small-business credit applications.').waitFor()
        await page.getByText('Changed by someone else').first().waitFor()
        await expect.poll(() => reads).toContain('/api/v1/integration/audit_logs')
        expect(reads.sort()).toEqual(['', '/api/v1/integration/audit_logs'])

        // Another person's answer: the questionnaire shows it; the overview and controls are not read again.
        reads = []
        const answered = await admin({
          method: 'PUT',
          url: `/use_cases/${useCaseId}/questionnaires/INTAKE/answers`,
          payload: { answers: [{ question_id: 'decision', value: 'Approves, declines or refers credit limits' }] },
        })
        expect(answered.statusCode, answered.body).toBe(200)
        await expect
          .poll(() => page.getByLabel('What does the system decide?').inputValue())
          .toBe('Approves, declines or refers credit limits')
        await expect.poll(() => reads).toContain('/api/v1/integration/audit_logs')
        expect(reads.some((r) => r.startsWith('/questionnaires'))).toBe(true)
        expect(reads.filter((r) => r === '' || r.startsWith('/controls') || r.startsWith('/workflow'))).toEqual([])
        await eventually(async () =>
          expect(await page.getByLabel('How many people does it affect per month?').inputValue()).toBe('1200'),
        )

        // A control changed by someone else: the controls section shows it, the questionnaires are not read again.
        reads = []
        const changed = await admin({
          method: 'PATCH',
          url: `/use_cases/${useCaseId}/controls/${controlId}`,
          payload: { due_date: '2031-05-01' },
        })
        expect(changed.statusCode, changed.body).toBe(200)
        await page.locator('#controls').getByText('due 2031-05-01').waitFor()
        await expect.poll(() => reads).toContain('/api/v1/integration/audit_logs')
        expect(reads.filter((r) => r === '' || r.startsWith('/questionnaires') || r.startsWith('/workflow'))).toEqual(
          [],
        )
        expect(reads.some((r) => r.startsWith('/controls'))).toBe(true)
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

      it("edits a use case's details from its schema; another person's change is announced and never typed over", async () => {
        const admin = t.as('acme', 'admin')
        const field = await admin({
          method: 'POST',
          url: '/custom_fields',
          payload: {
            name: 'Deployment',
            type: 'string',
            element_type: 'select',
            options: ['Pilot', 'Production'],
            entity_types: ['use_case'],
          },
        })
        expect(field.statusCode, field.body).toBe(201)
        const created = await admin({
          method: 'POST',
          url: '/use_cases',
          payload: { name: 'Edit me', description: 'First words.', risk_category_level: 'medium' },
        })
        expect(created.statusCode, created.body).toBe(201)
        const id = created.json().id
        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        await page.goto(`/console/use-cases/${id}`)
        await page.getByRole('heading', { name: 'Edit me', level: 1 }).waitFor()
        await page.getByRole('button', { name: 'Edit details' }).click()
        const dialog = page.getByRole('dialog', { name: 'Edit Edit me' })
        // The fields follow UseCaseUpdate: a name that must stay, the risk level's enum in words, lists, the owner,
        // then the custom field as a select.
        await dialog.getByLabel('Name').waitFor()
        expect(await dialog.getByLabel('Name').getAttribute('required')).not.toBeNull()
        expect(await dialog.getByLabel('Kind of AI').getAttribute('maxlength')).toBe('100')
        expect(await dialog.getByLabel('Risk level').inputValue()).toBe('Medium')
        await dialog.getByLabel('Regions').waitFor()
        await dialog.getByLabel('Owner').waitFor()
        await dialog.getByLabel('Deployment').waitFor()
        await expectClean(page, 'edit form')

        // An emptied name is refused before sending, next to the field.
        await dialog.getByLabel('Name').fill('')
        await dialog.getByRole('button', { name: 'Save' }).click()
        await dialog.getByText('Fill this in').waitFor()
        await dialog.getByLabel('Name').fill('Edit me')

        // The person types; meanwhile someone else renames the record.
        await dialog.getByLabel('Kind of AI').fill('large language model')
        await dialog.getByLabel('Deployment').click()
        await page.getByRole('option', { name: 'Pilot' }).click()
        const renamed = await admin({
          method: 'PATCH',
          url: `/use_cases/${id}`,
          payload: { name: 'Edit me (renamed)' },
        })
        expect(renamed.statusCode, renamed.body).toBe(200)
        await dialog.getByTestId('changed-elsewhere').getByText('Changed since you opened this form: Name').waitFor()
        expect(await dialog.getByLabel('Kind of AI').inputValue()).toBe('large language model')
        await dialog.getByRole('button', { name: 'Save' }).click()
        await dialog.waitFor({ state: 'hidden' })
        const after = (await admin({ method: 'GET', url: `/use_cases/${id}` })).json()
        // Only what the person changed was sent: the other person's name stays.
        expect(after).toMatchObject({
          name: 'Edit me (renamed)',
          ai_type: 'large language model',
          description: 'First words.',
        })
        expect(after.custom_fields).toMatchObject([{ name: 'Deployment', value: 'Pilot' }])

        // Both change the description: saving asks before putting the person's words over the other's.
        await page.getByRole('button', { name: 'Edit details' }).click()
        const again = page.getByRole('dialog')
        await again.getByLabel('Description').fill('My words.')
        await admin({ method: 'PATCH', url: `/use_cases/${id}`, payload: { description: 'Their words.' } })
        await again.getByTestId('changed-elsewhere').waitFor()
        await again.getByRole('button', { name: 'Save' }).click()
        await again.getByText('They changed what you changed').waitFor()
        expect((await admin({ method: 'GET', url: `/use_cases/${id}` })).json().description).toBe('Their words.')
        await again.getByRole('button', { name: 'Save mine anyway' }).click()
        await again.waitFor({ state: 'hidden' })
        expect((await admin({ method: 'GET', url: `/use_cases/${id}` })).json().description).toBe('My words.')
        const log = (await admin({ method: 'GET', url: `/audit_logs?use_case_id=${id}&page_limit=100` })).json()
        expect(log.items.some((a: { actor: { id: string } }) => a.actor.id === person.id)).toBe(true)
        await context.close()
      }, 120_000)

      it('edits a vendor from the registry and shows the refusal next to the field it names', async () => {
        const admin = t.as('acme', 'admin')
        const vendor = await admin({ method: 'POST', url: '/vendors', payload: { name: 'Acme AI', status: 'active' } })
        expect(vendor.statusCode, vendor.body).toBe(201)
        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        await page.goto('/console/vendors')
        await page.getByRole('button', { name: 'Edit Acme AI' }).click()
        const dialog = page.getByRole('dialog')
        await dialog.getByLabel('Website').fill('https://acme ai.example')
        await dialog.getByLabel('Status').click()
        await page.getByRole('option', { name: 'Under review' }).click()
        await dialog.getByRole('button', { name: 'Save' }).click()
        // The service's 422 names `website`: its message sits under that field, and nothing changed.
        await dialog.getByText('See the fields marked below.').waitFor()
        const websiteError = await dialog.getByLabel('Website').getAttribute('aria-describedby')
        expect(
          await page.locator(`[id="${websiteError?.split(' ').find((x) => x.includes('error'))}"]`).textContent(),
        ).toMatch(/http/)
        await expectClean(page, 'vendor edit refused')
        expect((await admin({ method: 'GET', url: `/vendors/${vendor.json().id}` })).json()).toMatchObject({
          status: 'active',
          website: null,
        })
        await dialog.getByLabel('Website').fill('https://acme-ai.example')
        await dialog.getByRole('button', { name: 'Save' }).click()
        await dialog.waitFor({ state: 'hidden' })
        expect((await admin({ method: 'GET', url: `/vendors/${vendor.json().id}` })).json()).toMatchObject({
          status: 'under_review',
          website: 'https://acme-ai.example',
        })
        await context.close()
      }, 120_000)

      it("refuses a file over the service's limit before sending it, and shows how far an upload is", async () => {
        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        await page.goto(`/console/use-cases/${useCaseId}`)
        await page.getByRole('heading', { name: 'Credit scoring', level: 1 }).waitFor()
        const requirement = page.locator(`#req-${controlId}-0`)
        await requirement.getByText('(up to 1 MB)').waitFor()
        const posts: string[] = []
        page.on('request', (r) => {
          if (r.method() === 'POST' && new URL(r.url()).pathname.endsWith('/integration/evidence')) posts.push(r.url())
        })
        await requirement.locator('input[type=file]').setInputFiles({
          name: 'too-big.bin',
          mimeType: 'application/octet-stream',
          buffer: Buffer.alloc(1024 * 1024 + 1, 1),
        })
        await requirement
          .getByRole('alert')
          .getByText('This file is 1 MB; the service takes files up to 1 MB.')
          .waitFor()
        expect(posts).toEqual([])

        // A slow line (Chromium's network emulation): the bar shows the share sent as it grows.
        const cdp = await context.newCDPSession(page)
        await cdp.send('Network.enable')
        await cdp.send('Network.emulateNetworkConditions', {
          offline: false,
          latency: 0,
          downloadThroughput: -1,
          uploadThroughput: 256 * 1024,
        })
        await requirement.locator('input[type=file]').setInputFiles({
          name: 'nearly-1mb.bin',
          mimeType: 'application/octet-stream',
          buffer: Buffer.alloc(900 * 1024, 2),
        })
        const bar = requirement.getByTestId('upload-progress')
        await bar.waitFor()
        const seen = new Set<string>()
        while (await bar.isVisible()) {
          const now = await bar
            .locator('[role=progressbar]')
            .getAttribute('aria-valuenow')
            .catch(() => null)
          if (now) seen.add(now)
          await page.waitForTimeout(100)
        }
        await cdp.send('Network.emulateNetworkConditions', {
          offline: false,
          latency: 0,
          downloadThroughput: -1,
          uploadThroughput: -1,
        })
        expect(posts.length).toBe(1)
        const between = [...seen].map(Number).filter((n) => n > 0 && n < 100)
        expect(between.length, `progress seen: ${[...seen].join(', ')}`).toBeGreaterThan(0)
        await context.close()
      }, 120_000)

      it('walks the process with the keyboard only: inbox, use case, answers, move forward; axe on every page', async () => {
        const admin = t.as('acme', 'admin')
        const uc = await admin({
          method: 'POST',
          url: '/use_cases',
          payload: {
            name: 'Keyboard case',
            risk_category_level: 'medium',
            owner: { owner_id: person.id, owner_type: 'user' },
            questionnaire_ids: ['INTAKE'],
          },
        })
        expect(uc.statusCode, uc.body).toBe(201)
        const id = uc.json().id
        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        await page.getByRole('heading', { name: 'Inbox' }).waitFor()
        const answer = page.getByRole('link', { name: 'Answer “AI intake”' })
        await answer.waitFor()
        await expectClean(page, 'keyboard: inbox')
        await tabTo(page, answer)
        await page.keyboard.press('Enter')
        await page.getByRole('heading', { name: 'Keyboard case', level: 1 }).waitFor()
        expect(page.url()).toContain(`/use-cases/${id}`)
        await expectClean(page, 'keyboard: use case')

        await tabTo(page, page.getByLabel('What does the system decide?'))
        await page.keyboard.type('Routes support tickets')
        await page.keyboard.press('Tab')
        await page.getByText('1 of 3 required answered').waitFor()
        await tabTo(page, page.locator('#q-INTAKE-personal_data'))
        await chooseWithKeys(page, 'No')
        await page.getByText('2 of 3 required answered').waitFor()
        await tabTo(page, page.locator('#q-INTAKE-autonomy'))
        await chooseWithKeys(page, 'human-in-the-loop')
        await page.getByText('3 of 3 required answered').waitFor()
        await expectClean(page, 'keyboard: answered')

        await tabTo(page, page.getByRole('button', { name: 'Move forward' }))
        await page.keyboard.press('Space')
        await expect.poll(() => page.getByTestId('stage').textContent()).not.toContain('Assessment')
        await expectClean(page, 'keyboard: moved')
        const answers = (await admin({ method: 'GET', url: `/use_cases/${id}/questionnaires/INTAKE` })).json()
        expect(
          Object.fromEntries(
            answers.answers.map((a: { question_id: string; value: unknown }) => [a.question_id, a.value]),
          ),
        ).toMatchObject({ decision: 'Routes support tickets', personal_data: false, autonomy: 'human-in-the-loop' })
        expect((await admin({ method: 'GET', url: `/use_cases/${id}/workflow` })).json().workflow_stage_step).not.toBe(
          'assessment',
        )
        await context.close()
      }, 120_000)

      it("lists in the inbox what waits on the person's teams: their use cases' questionnaires and their controls", async () => {
        const admin = t.as('acme', 'admin')
        const ok = async (p: Promise<{ statusCode: number; body: string; json(): any }>, status = 201) => {
          const res = await p
          expect(res.statusCode, res.body).toBe(status)
          return res.json()
        }
        const team = await ok(admin({ method: 'POST', url: '/teams', payload: { name: 'Model risk' } }))
        await ok(admin({ method: 'POST', url: `/teams/${team.id}/members`, payload: { user_id: person.id } }))
        const other = await ok(
          admin({ method: 'POST', url: '/users', payload: { email: 'grace@example.com', name: 'Grace Hopper' } }),
        )
        // Owned by the team: its questionnaire waits.
        await ok(
          admin({
            method: 'POST',
            url: '/use_cases',
            payload: {
              name: 'Churn model',
              risk_category_level: 'medium',
              owner: { owner_id: team.id },
              questionnaire_ids: ['INTAKE'],
            },
          }),
        )
        // Owned by someone else, a control assigned to the team and overdue.
        const fraud = await ok(
          admin({
            method: 'POST',
            url: '/use_cases',
            payload: { name: 'Fraud alerts', risk_category_level: 'medium', owner: { owner_id: other.id } },
          }),
        )
        await ok(
          admin({
            method: 'POST',
            url: `/use_cases/${fraud.id}/policy_packs`,
            payload: { key: 'CORE', due_date: '2020-01-01' },
          }),
        )
        const [control] = (await ok(admin({ method: 'GET', url: `/use_cases/${fraud.id}/controls` }), 200)).items
        await ok(
          admin({
            method: 'PATCH',
            url: `/use_cases/${fraud.id}/controls/${control.id}`,
            payload: { assignee: { owner_id: team.id } },
          }),
          200,
        )
        // Owned by someone else, a control assigned to the person and not overdue: found by the controls list.
        const triage = await ok(
          admin({
            method: 'POST',
            url: '/use_cases',
            payload: { name: 'Vendor triage', risk_category_level: 'low', owner: { owner_id: other.id } },
          }),
        )
        await ok(
          admin({
            method: 'POST',
            url: `/use_cases/${triage.id}/policy_packs`,
            payload: { key: 'CORE', due_date: '2999-01-01' },
          }),
        )
        const [mine] = (await ok(admin({ method: 'GET', url: `/use_cases/${triage.id}/controls` }), 200)).items
        await ok(
          admin({
            method: 'PATCH',
            url: `/use_cases/${triage.id}/controls/${mine.id}`,
            payload: { assignee: { owner_id: person.id } },
          }),
          200,
        )
        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        await page.getByRole('heading', { name: 'Inbox' }).waitFor()
        const list = page.getByRole('list', { name: 'Waiting for you' })
        await list.getByText('Churn model: 3 required answer(s) missing, for team Model risk').waitFor()
        await list.getByText('Fraud alerts, due 2020-01-01, for team Model risk').waitFor()
        await list.getByText('Vendor triage, due 2999-01-01', { exact: true }).waitFor()
        // Overdue first.
        expect(await list.locator('li').first().textContent()).toContain('Fraud alerts')
        await expectClean(page, 'inbox with team items')
        await context.close()
      }, 120_000)

      it("lists the questionnaires missing answers on the person's and their team's models and vendors, and answers one where its link opens", async () => {
        const admin = t.as('acme', 'admin')
        const ok = async (p: Promise<{ statusCode: number; body: string; json(): any }>, status = 201) => {
          const res = await p
          expect(res.statusCode, res.body).toBe(status)
          return res.json()
        }
        const sections = (id: string) => [
          {
            id: 'card',
            title: 'Model card',
            questions: [
              {
                id: 'intended_use',
                question: 'What is it meant to be used for?',
                evidence_type: 'text',
                required: true,
              },
              { id: 'limits', question: 'Where does it perform poorly?', evidence_type: 'text', required: true },
              { id: `${id}_note`, question: 'Anything else?', evidence_type: 'text' },
            ],
          },
        ]
        await ok(
          admin({
            method: 'POST',
            url: '/questionnaires',
            payload: { key: 'MODEL-CARD', name: 'Model card', target: 'model', sections: sections('m') },
          }),
        )
        await ok(
          admin({
            method: 'POST',
            url: '/questionnaires',
            payload: { key: 'VENDOR-DD', name: 'Vendor due diligence', target: 'vendor', sections: sections('v') },
          }),
        )
        const team = await ok(admin({ method: 'POST', url: '/teams', payload: { name: 'Procurement' } }))
        await ok(admin({ method: 'POST', url: `/teams/${team.id}/members`, payload: { user_id: person.id } }))
        const model = await ok(
          admin({ method: 'POST', url: '/models', payload: { name: 'Credit GBM', owner: { owner_id: person.id } } }),
        )
        await ok(admin({ method: 'POST', url: `/models/${model.id}/questionnaires`, payload: { key: 'MODEL-CARD' } }))
        const vendor = await ok(
          admin({
            method: 'POST',
            url: '/vendors',
            payload: { name: 'Bureau Data Ltd', owner: { owner_id: team.id } },
          }),
        )
        await ok(admin({ method: 'POST', url: `/vendors/${vendor.id}/questionnaires`, payload: { key: 'VENDOR-DD' } }))
        // Someone else's model with the same gap is not the person's.
        const other = await ok(admin({ method: 'POST', url: '/models', payload: { name: 'Not mine' } }))
        await ok(admin({ method: 'POST', url: `/models/${other.id}/questionnaires`, payload: { key: 'MODEL-CARD' } }))

        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        const list = page.getByRole('list', { name: 'Waiting for you' })
        await list.getByText('model Credit GBM: 2 required answer(s) missing').waitFor()
        await list.getByText('vendor Bureau Data Ltd: 2 required answer(s) missing, for team Procurement').waitFor()
        expect(await list.getByText('Not mine').count()).toBe(0)
        expect(await page.getByTestId('inbox-cuts').count()).toBe(0)
        await expectClean(page, 'inbox with models and vendors')

        await list.getByRole('link', { name: 'Answer “Model card”' }).click()
        await page.getByRole('heading', { name: 'Credit GBM', level: 1 }).waitFor()
        expect(new URL(page.url()).pathname + new URL(page.url()).hash).toBe(
          `/console/models/${model.id}#questionnaires`,
        )
        await expectClean(page, 'model page')
        await page.getByLabel('What is it meant to be used for?').fill('Scoring retail credit applications')
        await page.getByLabel('What is it meant to be used for?').press('Tab')
        await page.getByText('1 of 2 required answered').waitFor()
        await page.getByLabel('Where does it perform poorly?').fill('Thin-file applicants')
        await page.getByLabel('Where does it perform poorly?').press('Tab')
        await page.getByText('2 of 2 required answered').waitFor()
        const answers = await ok(admin({ method: 'GET', url: `/models/${model.id}/questionnaires/MODEL-CARD` }), 200)
        expect(answers.progress).toMatchObject({ complete: true })
        expect(answers.answers.map((a: { answered_by: string }) => a.answered_by)).toEqual([person.id, person.id])

        // Answered: the inbox no longer lists it; the vendor's still waits.
        await page.getByRole('link', { name: 'Inbox' }).click()
        await list.getByText('vendor Bureau Data Ltd: 2 required answer(s) missing, for team Procurement').waitFor()
        expect(await list.getByText('model Credit GBM').count()).toBe(0)
        await context.close()
      }, 120_000)

      it('links the stage, step, control status, overdue and questionnaire figures to the filtered lists, and the registry keeps its filters in the address', async () => {
        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        await page.goto('/console/dashboard')
        await page.getByRole('heading', { name: 'Use cases by stage' }).waitFor()
        const table = page.getByTestId('registry-table')

        await page
          .getByRole('link', { name: /^Collecting evidence: \d+$/ })
          .first()
          .click()
        await page.waitForURL(/\/console\/use-cases\?stage=ws_[^&]+&step=evidence_collection/)
        await table.waitFor()
        expect(await page.getByLabel('Step', { exact: true }).first().inputValue()).toBe('Collecting evidence')
        expect(await table.locator('tbody tr').count()).toBeGreaterThan(0)
        for (const step of await table.locator('tbody tr td:nth-child(3)').allTextContents())
          expect(step).toBe('Collecting evidence')
        await expectClean(page, 'registry by stage and step')

        // The control figures count controls: they open the controls list, filtered alike.
        const controls = page.getByTestId('controls-table')
        await page.goto('/console/dashboard')
        await page.getByRole('link', { name: /^Not started: \d+$/ }).click()
        await page.waitForURL(/\/console\/controls\?status=pending$/)
        await controls.getByRole('link', { name: 'Fraud alerts' }).waitFor()

        await page.goto('/console/dashboard')
        await page.getByRole('link', { name: /^1 overdue$/ }).click()
        await page.waitForURL(/\/console\/controls\?overdue=true$/)
        await controls.getByRole('link', { name: 'Fraud alerts' }).waitFor()
        expect(await controls.locator('tbody tr').count()).toBe(1)

        // The use cases with overdue controls still open the use cases.
        await page.goto('/console/dashboard')
        await page.getByRole('link', { name: 'All 1 in the list' }).click()
        await page.waitForURL(/\/console\/use-cases\?overdue=true$/)
        await table.getByRole('link', { name: 'Fraud alerts' }).waitFor()
        expect(await table.locator('tbody tr').count()).toBe(1)

        // Each questionnaire figure lands on the registry filtered to the use cases it counts, and the filter clears.
        const admin = t.as('acme', 'admin')
        const summary = (await admin({ method: 'GET', url: '/governance_summary' })).json()
        for (const [completion, shown] of [
          ['incomplete', 'Answers missing'],
          ['complete', 'All answered'],
          ['none', 'No questionnaire'],
        ] as const) {
          const listed = (
            await admin({ method: 'GET', url: `/use_cases?questionnaire_completion=${completion}&page_limit=100` })
          ).json().items as { name: string }[]
          expect(listed.length, completion).toBe(summary.questionnaires.use_cases[completion])
          await page.goto('/console/dashboard')
          await page.getByRole('link', { name: `${shown}: ${listed.length}` }).click()
          await page.waitForURL(new RegExp(`/console/use-cases\\?questionnaires=${completion}$`))
          await table.waitFor()
          expect(await page.getByLabel('Questionnaires', { exact: true }).first().inputValue()).toBe(shown)
          await expect
            .poll(async () => (await table.locator('tbody tr td:first-child').allTextContents()).sort())
            .toEqual(listed.map((u) => u.name).sort())
        }
        expect(summary.questionnaires.use_cases.incomplete).toBeGreaterThan(0)
        await expectClean(page, 'registry by questionnaire completion')
        // The select's clear button (Mantine keeps it out of the accessibility tree: the keyboard deselects instead).
        await page.getByLabel('Questionnaires', { exact: true }).first().locator('xpath=..').locator('button').click()
        await page.waitForURL(/\/console\/use-cases$/)
        expect(await page.getByLabel('Questionnaires', { exact: true }).first().inputValue()).toBe('')

        await context.close()
      }, 120_000)

      it("lists every use case's controls: each status figure and the overdue one open exactly the controls they count, filtered by status and assignee, each linked to its use case, keyboard and 375 px included", async () => {
        const admin = t.as('acme', 'admin')
        const ok = async (p: Promise<{ statusCode: number; body: string; json(): any }>, status = 201) => {
          const res = await p
          expect(res.statusCode, res.body).toBe(status)
          return res.json()
        }
        await publishedControl(t, 'acme', 'LOGGING', {
          name: 'Decision logging',
          evidence_requirements: [{ type: 'file', description: 'Log retention policy', required: true }],
        })
        await ok(
          admin({
            method: 'POST',
            url: '/policy_packs',
            payload: { key: 'REVIEW', name: 'Review controls', controls: [{ key: 'OVERSIGHT' }, { key: 'LOGGING' }] },
          }),
        )
        const uc = await ok(
          admin({
            method: 'POST',
            url: '/use_cases',
            payload: { name: 'Loan pricing', risk_category_level: 'medium', owner: { owner_id: person.id } },
          }),
        )
        await ok(
          admin({
            method: 'POST',
            url: `/use_cases/${uc.id}/policy_packs`,
            payload: { key: 'REVIEW', due_date: '2020-06-30' },
          }),
        )
        const applied = (await ok(admin({ method: 'GET', url: `/use_cases/${uc.id}/controls` }), 200)).items as {
          id: string
          control_key: string
        }[]
        // Oversight stays not started past its due date (overdue); logging is in progress, due later, and Ada's.
        const logging = applied.find((c) => c.control_key === 'LOGGING')!
        await ok(
          admin({
            method: 'PATCH',
            url: `/use_cases/${uc.id}/controls/${logging.id}`,
            payload: { status: 'in_progress', due_date: '2999-12-31', assignee: { owner_id: person.id } },
          }),
          200,
        )
        const overdue = (await ok(admin({ method: 'GET', url: '/use_case_controls?overdue=true&page_limit=100' }), 200))
          .items as { name: string; use_case_name: string }[]
        expect(overdue.map((c) => `${c.use_case_name}: ${c.name}`)).toContain('Loan pricing: Human oversight')

        const context = await newContext(base)
        const page = await context.newPage()
        await signIn(page)
        const table = page.getByTestId('controls-table')
        // Each status figure opens the controls in that status, as many as it says.
        const byStatus: Record<string, number> = {}
        for (const [status, shown] of [
          ['pending', 'Not started'],
          ['in_progress', 'In progress'],
          ['implemented', 'Done'],
          ['not_applicable', 'Does not apply'],
        ] as const) {
          await page.goto('/console/dashboard')
          const link = page.getByRole('link', { name: new RegExp(`^${shown}: \\d+$`) })
          byStatus[status] = Number((await link.textContent())!.split(': ')[1])
          await link.click()
          await page.waitForURL(new RegExp(`/console/controls\\?status=${status}$`))
          await table.waitFor()
          expect(await page.getByLabel('Status', { exact: true }).first().inputValue()).toBe(shown)
          expect(await table.locator('tbody tr').count(), shown).toBe(byStatus[status])
        }
        expect(byStatus.in_progress).toBeGreaterThan(0)

        await page.goto('/console/dashboard')
        const figure = page.getByRole('link', { name: /^\d+ overdue$/ })
        await figure.waitFor()
        const count = Number((await figure.textContent())!.split(' ')[0])
        expect(count).toBe(overdue.length)
        await figure.click()
        await page.waitForURL(/\/console\/controls\?overdue=true$/)
        await table.getByRole('link', { name: 'Loan pricing' }).waitFor()
        expect(await table.locator('tbody tr').count()).toBe(count)
        expect(await table.getByText('Overdue', { exact: true }).count()).toBe(count)
        expect((await table.locator('tbody tr td:nth-child(2)').allTextContents()).sort()).toEqual(
          overdue.map((c) => c.use_case_name).sort(),
        )
        expect(await page.getByRole('radio', { name: 'Overdue only' }).isChecked()).toBe(true)
        await expectClean(page, 'controls, overdue')

        // By keyboard: all controls, then those in progress, then Ada's of them.
        await page.getByRole('radio', { name: 'Overdue only' }).focus()
        await page.keyboard.press('ArrowLeft')
        await page.waitForURL(/\/console\/controls\?open=true$/)
        await page.keyboard.press('ArrowLeft')
        await page.waitForURL(/\/console\/controls$/)
        await table.waitFor()
        await tabTo(page, page.getByLabel('Status', { exact: true }).first())
        await chooseWithKeys(page, 'In progress')
        await page.waitForURL(/\/console\/controls\?status=in_progress$/)
        const row = table.getByRole('row', { name: /Decision logging/ })
        await row.waitFor()
        for (const status of await table.locator('tbody tr td:nth-child(3)').allTextContents())
          expect(status).toBe('In progress')
        expect(await row.locator('td').allTextContents()).toEqual([
          'Decision loggingLOGGING v1',
          'Loan pricing',
          'In progress',
          'Ada Lovelace',
          '2999-12-31',
          '0 of 1',
        ])
        await tabTo(page, page.getByLabel('Assigned to', { exact: true }).first())
        await chooseWithKeys(page, 'Ada Lovelace')
        await page.waitForURL(new RegExp(`/console/controls\\?status=in_progress&assignee=${person.id}$`))
        await row.waitFor()
        for (const who of await table.locator('tbody tr td:nth-child(4)').allTextContents())
          expect(who).toBe('Ada Lovelace')
        await expectClean(page, 'controls, in progress and assigned')

        // The use case link opens the use case at its controls.
        await tabTo(page, row.getByRole('link', { name: 'Loan pricing' }))
        await page.keyboard.press('Enter')
        await page.getByRole('heading', { name: 'Loan pricing', level: 1 }).waitFor()
        expect(new URL(page.url()).pathname + new URL(page.url()).hash).toBe(`/console/use-cases/${uc.id}#controls`)
        const section = page.locator('#controls')
        await section.getByRole('heading', { name: 'Decision logging' }).waitFor()
        // Scrolled to it, below the header (the section keeps a 70 px margin for it).
        await expect
          .poll(() => section.evaluate((el) => window.scrollY > 0 && Math.abs(el.getBoundingClientRect().top - 70) < 2))
          .toBe(true)

        // At 375 px the table scrolls inside its frame, not the page.
        await page.setViewportSize({ width: 375, height: 800 })
        await page.goto('/console/controls?overdue=true')
        await table.getByRole('link', { name: 'Loan pricing' }).waitFor()
        await expectClean(page, 'controls at 375 px')
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
        expect(overflow).toBeLessThanOrEqual(0)
        await context.close()
      }, 120_000)
    })
  },
)

// CONSOLE_SCREENSHOTS=1 refreshes the README's pictures (docs/console-*.png): a service at its defaults (the evidence
// limit included), a tenant with a few people, a team and records in every state, a desktop window, no notification.
describe.runIf(hasBrowser && process.env.CONSOLE_SCREENSHOTS)('console screenshots for the docs', () => {
  let t: TestApp
  let base: string
  let person: { id: string; email: string }
  let useCaseId: string
  let controlId: string

  beforeAll(async () => {
    t = await startTestApp('sqlite')
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const admin = t.as('acme', 'admin')
    const ok = async (p: Promise<{ statusCode: number; body: string; json(): any }>, status = 201) => {
      const res = await p
      expect(res.statusCode, res.body).toBe(status)
      return res.json()
    }
    const post = (url: string, payload: object) => ok(admin({ method: 'POST', url, payload }))
    person = await post('/users', {
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      title: 'Product owner',
      role: 'write',
    })
    const grace = await post('/users', { email: 'grace@example.com', name: 'Grace Hopper', title: 'Risk officer' })
    const team = await post('/teams', { name: 'Credit risk' })
    await post(`/teams/${team.id}/members`, { user_id: person.id })
    await publishedControl(t, 'acme', 'OVERSIGHT', {
      name: 'Human oversight',
      evidence_requirements: [
        { type: 'file', description: 'Oversight procedure', required: true },
        { type: 'file', description: 'Reviewer training record', required: true },
      ],
    })
    await post('/policy_packs', { key: 'CORE', name: 'Core controls', controls: [{ key: 'OVERSIGHT' }] })
    await post('/questionnaires', { key: 'INTAKE', name: 'AI intake', target: 'use_case', sections: INTAKE_SECTIONS })
    await post('/questionnaires', {
      key: 'MODEL-CARD',
      name: 'Model card',
      target: 'model',
      sections: [
        {
          id: 'card',
          title: 'Model card',
          questions: [
            { id: 'intended_use', question: 'What is it meant to be used for?', evidence_type: 'text', required: true },
            { id: 'limits', question: 'Where does it perform poorly?', evidence_type: 'text', required: true },
          ],
        },
      ],
    })
    const model = await post('/models', {
      name: 'Credit risk GBM',
      summary: 'Gradient-boosted trees over bureau and application data.',
      status: 'in_production',
      owner: { owner_id: person.id },
    })
    await post(`/models/${model.id}/questionnaires`, { key: 'MODEL-CARD' })
    const vendor = await post('/vendors', { name: 'Bureau Data Ltd', owner: { owner_id: team.id } })
    const uc = await post('/use_cases', {
      name: 'Credit scoring',
      description: 'Scores retail credit applications and proposes a limit; a credit officer decides.',
      risk_category_level: 'high',
      regions: ['EU', 'UK'],
      owner: { owner_id: person.id },
      questionnaire_ids: ['INTAKE'],
    })
    useCaseId = uc.id
    await post(`/use_cases/${uc.id}/policy_packs`, { key: 'CORE' })
    await post(`/use_cases/${uc.id}/models`, { id: model.id })
    await post(`/use_cases/${uc.id}/vendors`, { id: vendor.id })
    const controls = await ok(admin({ method: 'GET', url: `/use_cases/${uc.id}/controls` }), 200)
    controlId = controls.items[0].id
    await ok(
      admin({
        method: 'PATCH',
        url: `/use_cases/${uc.id}/controls/${controlId}`,
        payload: { assignee: { owner_id: person.id }, due_date: '2031-03-31' },
      }),
      200,
    )
    await post('/use_cases', {
      name: 'Mortgage affordability',
      description: 'Estimates what a household can afford to borrow.',
      risk_category_level: 'high',
      owner: { owner_id: team.id },
      questionnaire_ids: ['INTAKE'],
    })
    const collections = await post('/use_cases', {
      name: 'Collections prioritisation',
      risk_category_level: 'medium',
      owner: { owner_id: grace.id },
    })
    await post(`/use_cases/${collections.id}/policy_packs`, { key: 'CORE', due_date: '2026-11-15' })
    const [late] = (await ok(admin({ method: 'GET', url: `/use_cases/${collections.id}/controls` }), 200)).items
    await ok(
      admin({
        method: 'PATCH',
        url: `/use_cases/${collections.id}/controls/${late.id}`,
        payload: { assignee: { owner_id: team.id } },
      }),
      200,
    )
    await post('/use_cases', {
      name: 'Support ticket routing',
      risk_category_level: 'low',
      owner: { owner_id: grace.id },
    })
  })
  afterAll(() => t?.close())

  it('takes the inbox and the use case page after its gate was passed, at 1280 px', async () => {
    const context = await newContext(base)
    const page = await context.newPage()
    const out = await runCliAsync(['users', 'login-link', '--tenant', 'acme', '--email', person.email], {
      DATABASE_URL: t.config.databaseUrl,
      SERVICE_PUBLIC_URL: base,
      LOG_LEVEL: 'silent',
    })
    await page.goto(/\/auth\/link\/[A-Za-z0-9_.~-]+/.exec(`${out.stdout}`)![0])
    await page.waitForURL(/\/console\//)
    const list = page.getByRole('list', { name: 'Waiting for you' })
    await list.getByText('Mortgage affordability: 3 required answer(s) missing, for team Credit risk').waitFor()
    await list.getByText('model Credit risk GBM: 2 required answer(s) missing').waitFor()
    await expectClean(page, 'screenshot: inbox')
    await page.screenshot({ path: 'docs/console-inbox.png', fullPage: true })

    // Ada answers, uploads the evidence and moves the use case through its gates, as the person in the picture.
    await page.goto(`/console/use-cases/${useCaseId}`)
    await page.getByRole('heading', { name: 'Credit scoring', level: 1 }).waitFor()
    await page.getByLabel('What does the system decide?').fill('Proposes a credit limit; a credit officer decides')
    await page.getByLabel('What does the system decide?').press('Tab')
    await page.getByText('1 of 3 required answered').waitFor()
    await page.getByLabel('How many people does it affect per month?').fill('12000')
    await page.getByLabel('How many people does it affect per month?').press('Tab')
    await page.locator('#q-INTAKE-personal_data').click()
    await page.getByRole('option', { name: 'Yes' }).click()
    await page.getByText('2 of 3 required answered').waitFor()
    await page.locator('#q-INTAKE-autonomy').click()
    await page.getByRole('option', { name: 'human-in-the-loop' }).click()
    await page.getByText('3 of 3 required answered').waitFor()
    for (const [i, name, body] of [
      [0, 'oversight-procedure.pdf', EVIDENCE],
      [1, 'reviewer-training.pdf', TRAINING],
    ] as const) {
      await page.locator(`#req-${controlId}-${i} input[type=file]`).setInputFiles({
        name,
        mimeType: 'application/pdf',
        buffer: body,
      })
      await page.locator(`#req-${controlId}-${i}`).getByText('Evidence attached').waitFor()
    }
    await page.getByRole('button', { name: 'Move forward' }).click()
    await expect.poll(() => page.getByTestId('stage').textContent()).toContain('Collecting evidence')
    await page.getByRole('button', { name: 'Move forward' }).click()
    await expect.poll(() => page.getByTestId('stage').textContent()).toContain('Cleared')
    // A fresh load: the page as the next visitor sees it, with no notification over it.
    await page.reload()
    await page.getByRole('heading', { name: 'History', level: 2 }).waitFor()
    await page.locator(`#req-${controlId}-0`).getByText('(up to 25 MB)').waitFor()
    expect(await page.locator('.mantine-Notification-root').count()).toBe(0)
    await expectClean(page, 'screenshot: use case')
    await page.screenshot({ path: 'docs/console-use-case.png', fullPage: true })
    await context.close()
  }, 120_000)
})
