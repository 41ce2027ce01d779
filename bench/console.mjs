// The console's budgets, measured (not asserted by a test): the first load of /console ships at most 300 KB of
// compressed JavaScript, and the registry of 10 000 use cases is interactive within 1 s of navigation.
// Run after `npm run build`: node bench/console.mjs [--skip-registry]. Needs /usr/bin/chromium for the second part.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync } from 'node:zlib'

const dist = 'console/dist'
const index = readFileSync(join(dist, 'index.html'), 'utf8')
// What the first page loads: the entry script, the chunks it imports statically (Vite lists them as modulepreload).
const first = [...index.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.js)"/g)].map((m) => m[1])
const seen = new Set()
const queue = [...first]
while (queue.length) {
  const file = queue.shift()
  if (seen.has(file)) continue
  seen.add(file)
  const text = readFileSync(join(dist, file), 'utf8')
  // Static imports only (`import … from "./x.js"`); dynamic import() chunks load when their page opens.
  for (const m of text.matchAll(/(?:^|[;}\n])\s*import\s*(?:[^'"()]*?from\s*)?["']\.\/([^"']+\.js)["']/g))
    queue.push(`assets/${m[1]}`)
}
let raw = 0
let br = 0
for (const file of seen) {
  const bytes = readFileSync(join(dist, file))
  raw += bytes.length
  br += brotliCompressSync(bytes).length
}
console.log(
  `first load: ${seen.size} script(s), ${(raw / 1024).toFixed(1)} KB raw, ${(br / 1024).toFixed(1)} KB brotli (budget 300 KB)`,
)
if (br > 300 * 1024) process.exitCode = 1

if (process.argv.includes('--skip-registry')) process.exit()
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
if (!existsSync(CHROMIUM)) {
  console.log(`registry: skipped, no browser at ${CHROMIUM}`)
  process.exit()
}

// A service of its own on an empty SQLite file, 10 000 use cases owned by one person, a one-time link for them.
const dir = mkdtempSync(join(tmpdir(), 'aigov-console-bench-'))
const port = 20000 + Math.floor(Math.random() * 20000)
const base = `http://127.0.0.1:${port}`
const env = {
  ...process.env,
  DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
  SERVICE_PORT: String(port),
  SERVICE_HOST: '127.0.0.1',
  SERVICE_API_KEY: `sk_${'b'.repeat(40)}`,
  SERVICE_TENANT: 'bench',
  SERVICE_PUBLIC_URL: base,
  SERVICE_JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
  RATE_LIMIT_PER_MINUTE: '1000000',
  LOG_LEVEL: 'warn',
}
const service = spawn(process.execPath, ['dist/service/aigov.js', 'serve'], { env, stdio: 'inherit' })
try {
  for (let i = 0; ; i++) {
    if (
      await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break
    if (i > 100) throw new Error('the service did not start')
    await new Promise((r) => setTimeout(r, 100))
  }
  const headers = { 'x-api-key': env.SERVICE_API_KEY, 'x-tenant': 'bench' }
  const token = (await (await fetch(`${base}/api/v1/integration/auth/token`, { method: 'POST', headers })).json())
    .access_token
  const api = (path, body) =>
    fetch(`${base}/api/v1/integration${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json())
  const person = await api('/users', { email: 'bench@example.com', name: 'Bench Person', role: 'write' })
  for (let i = 0; i < 10_000; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        api('/use_cases', {
          name: `Use case ${String(i + j).padStart(5, '0')}`,
          risk_category_level: ['high', 'medium', 'low'][(i + j) % 3],
        }),
      ),
    )
  }
  const out = spawnSync(
    process.execPath,
    ['dist/service/aigov.js', 'users', 'login-link', '--tenant', 'bench', '--email', person.email],
    { env, encoding: 'utf8' },
  )
  const link = /\/auth\/link\/[A-Za-z0-9_.~-]+/.exec(out.stdout)?.[0]
  if (!link) throw new Error(`no login link: ${out.stdout}${out.stderr}`)
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  })
  const page = await browser.newPage()
  await page.goto(base + link)
  await page.waitForURL(/\/console\//)
  const runs = []
  for (let run = 0; run < 5; run++) {
    await page.goto(`${base}/console/use-cases?sort=name&run=${run}`, { waitUntil: 'commit' })
    // Interactive: the first page of rows is drawn and the next-page button can be pressed (enabled); the time is the
    // page's own clock from the navigation's start.
    await page.getByRole('link', { name: 'Use case 00000' }).waitFor()
    await page.waitForFunction(() => {
      const next = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Next page')
      return next && !next.disabled
    })
    runs.push(Math.round(await page.evaluate(() => performance.now())))
  }
  runs.sort((a, b) => a - b)
  console.log(
    `registry of 10 000 use cases interactive in ${runs[2]} ms (median of 5; runs ${runs.join(', ')}; budget 1000 ms)`,
  )
  if (runs[2] > 1000) process.exitCode = 1
  await browser.close()
} finally {
  service.kill('SIGTERM')
}
