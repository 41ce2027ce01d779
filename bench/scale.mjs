// npm run bench:scale: how the service holds up with a large tenant. Seeds one with `aigov seed`, then measures
// the first page of use cases against a deep page, filtered audit-log queries, a full audit-log export (time and
// memory), another tenant's reads while three full exports run at once, and create throughput on top of the existing rows.
//
//   SCALE_USE_CASES    use cases to seed (default 100 000; 1 000 000 for the issue's figures)
//   SCALE_AUDIT_LOGS   audit records to seed (default 2 × use cases)
//   SCALE_DURATION     seconds per measurement (default 5)
//   DATABASE_URL=postgres://…   PostgreSQL instead of SQLite
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CLI, freshDatabase, load, P, ROOT, setting, startService, TENANT, token } from './lib.mjs'

const useCases = setting('use-cases', 'SCALE_USE_CASES', 100_000)
const auditLogs = setting('audit-logs', 'SCALE_AUDIT_LOGS', useCases * 2)
const duration = setting('duration', 'SCALE_DURATION', 5)
const PAGE = 100
const resultsDir = join(ROOT, 'bench/results')
mkdirSync(resultsDir, { recursive: true })

const database = await freshDatabase()
console.log(
  `bench:scale: ${database.dialect}, ${useCases} use cases, ${auditLogs} audit records, ${duration} s per measurement`,
)

const seedStarted = performance.now()
const seeded = spawnSync(
  process.execPath,
  [CLI, 'seed', '--use-cases', String(useCases), '--audit-logs', String(auditLogs), '--tenant', TENANT],
  {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      SERVICE_JWT_SECRET: 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  },
)
if (seeded.status !== 0) throw new Error(`aigov seed failed: ${seeded.stdout}`)
const seedSeconds = (performance.now() - seedStarted) / 1000
console.log(`  ${seeded.stdout.trim()}`)

// A small second tenant with a read key: its reads are measured while the big tenant exports.
const OTHER_TENANT = 'bench-other'
const cli = (...args) => {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      SERVICE_JWT_SECRET: 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    },
    encoding: 'utf8',
  })
  if (res.status !== 0) throw new Error(`aigov ${args.join(' ')} failed: ${res.stderr}`)
  return res.stdout
}
cli('seed', '--use-cases', '200', '--tenant', OTHER_TENANT)
const otherKey = /^sk_\S+$/m.exec(
  cli('keys', 'create', '--tenant', OTHER_TENANT, '--role', 'read', '--name', 'bench-reader'),
)[0]

// The read cache off: every page and query below is read from the database, which is what scale measures.
const service = await startService(database.url, { SERVICE_READ_CACHE_MB: '0', SERVICE_RECORD_CACHE_MB: '0' })
const base = service.base
const auth = { authorization: `Bearer ${await token(base)}` }
const json = { ...auth, 'content-type': 'application/json' }
const get = async (path) => {
  const res = await fetch(`${base}${P}${path}`, { headers: auth })
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

// Walk to the deepest page worth measuring: page 10 000 at 1 000 000 use cases, else the last full page.
const deepPage = Math.max(1, Math.min(10_000, Math.floor(useCases / PAGE)))
const walkStarted = performance.now()
let cursor = null
let sample = null
for (let page = 1; page < deepPage; page++) {
  const body = await get(`/use_cases?page_limit=${PAGE}${cursor ? `&page_after=${cursor}` : ''}`)
  cursor = body.pagination.next_cursor
  if (page === 1) sample = body.items[17]
}
const walkSeconds = (performance.now() - walkStarted) / 1000
console.log(`  walked to page ${deepPage} in ${walkSeconds.toFixed(1)} s`)

const runs = []
/**
 * Line ends in a chunk of an export, found by indexOf: counted byte by byte in JavaScript, three exports' 320 MB took
 * this process's thread for seconds, and the reads it measured meanwhile waited for it, not for the service.
 */
const lineEnds = (chunk) => {
  let n = 0
  for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) n++
  return n
}
/**
 * One client, one request after another for `duration` seconds (or while `running()` says so): latency to 0.1 ms
 * (autocannon rounds to 1 ms).
 */
const measure = async (name, { url, method = 'GET', headers, body, running }) => {
  const times = []
  let errors = 0
  const started = performance.now()
  const until = started + duration * 1000
  while (running ? running() : performance.now() < until) {
    const started = performance.now()
    const res = await fetch(url, { method, headers, body })
    await res.arrayBuffer()
    times.push(performance.now() - started)
    if (res.status !== 200) errors++
  }
  times.sort((a, b) => a - b)
  const at = (q) => Math.round(times[Math.min(times.length - 1, Math.floor(times.length * q))] * 10) / 10
  const seconds = (performance.now() - started) / 1000
  const result = {
    name,
    requests_per_s: Math.round(times.length / seconds),
    p50_ms: at(0.5),
    p99_ms: at(0.99),
    max_ms: at(1),
    total: times.length,
    errors,
  }
  runs.push(result)
  console.log(
    `  ${name.padEnd(60)} p50 ${String(result.p50_ms).padStart(6)} ms  p99 ${String(result.p99_ms).padStart(6)} ms${errors ? `  ERRORS ${errors}` : ''}`,
  )
  return result
}
const first = await measure(`GET /use_cases page 1 (${PAGE} per page)`, {
  url: `${base}${P}/use_cases?page_limit=${PAGE}`,
  headers: auth,
})
const deep = await measure(`GET /use_cases page ${deepPage}`, {
  url: `${base}${P}/use_cases?page_limit=${PAGE}${cursor ? `&page_after=${cursor}` : ''}`,
  headers: auth,
})

const start = new Date(Date.now() - 3600_000).toISOString()
const filters = {
  'action = use_case.updated': { action: ['use_case.updated'] },
  'resource_id = one use case': { resource_id: sample.id },
  'use_case_id = one use case': { use_case_id: sample.id },
  'q = a use case name': { q: sample.name },
  'source = cli, last hour': { source: 'cli', start_time: start },
  'resource_type + action, newest first': {
    resource_type: ['use_case'],
    action: ['use_case.created'],
    sort: '-created_at',
  },
}
const filtered = {}
for (const [label, filter] of Object.entries(filters)) {
  filtered[label] = await measure(`POST /audit_logs/query ${label}`, {
    url: `${base}${P}/audit_logs/query`,
    method: 'POST',
    headers: json,
    body: JSON.stringify({ ...filter, page_limit: 50 }),
  })
}

// Export everything, counting lines and watching the service's memory while it streams.
const rssBefore = service.rssMb()
let rssDuring = rssBefore
const watcher = setInterval(() => (rssDuring = Math.max(rssDuring, service.rssMb())), 50)
const exportStarted = performance.now()
const res = await fetch(`${base}${P}/audit_logs/export?format=ndjson`, { headers: auth })
let lines = 0
let bytes = 0
for await (const chunk of res.body) {
  bytes += chunk.length
  lines += lineEnds(chunk)
}
const exportSeconds = (performance.now() - exportStarted) / 1000
clearInterval(watcher)
const exported = {
  records: lines,
  mb: Math.round(bytes / 1e5) / 10,
  seconds: Math.round(exportSeconds * 10) / 10,
  records_per_s: Math.round(lines / exportSeconds),
  rss_before_mb: Math.round(rssBefore),
  rss_peak_during_mb: Math.round(rssDuring),
}
console.log(
  `  export: ${lines} records, ${exported.mb} MB in ${exported.seconds} s (${exported.records_per_s}/s), RSS ${exported.rss_before_mb} -> peak ${exported.rss_peak_during_mb} MB`,
)

// Three full exports at once (the most one tenant may run), and another tenant's reads while they last.
const otherToken = (
  await (
    await fetch(`${base}${P}/auth/token`, {
      method: 'POST',
      headers: { 'x-api-key': otherKey, 'x-tenant': OTHER_TENANT },
    })
  ).json()
).access_token
let exportsRunning = 3
const concurrentStarted = performance.now()
const concurrent = await Promise.all(
  Array.from({ length: 3 }, async () => {
    try {
      const res = await fetch(`${base}${P}/audit_logs/export?format=ndjson`, { headers: auth })
      let records = 0
      for await (const chunk of res.body) records += lineEnds(chunk)
      return { status: res.status, records }
    } finally {
      exportsRunning--
    }
  }).concat([
    measure('GET /use_cases of another tenant during 3 concurrent full exports', {
      url: `${base}${P}/use_cases?page_limit=${PAGE}`,
      headers: { authorization: `Bearer ${otherToken}` },
      running: () => exportsRunning > 0,
    }),
  ]),
)
const duringExports = concurrent.pop()
const concurrentExports = {
  seconds: Math.round((performance.now() - concurrentStarted) / 100) / 10,
  exports: concurrent,
}
console.log(
  `  3 concurrent exports: ${concurrent.map((e) => `${e.status}/${e.records}`).join(', ')} in ${concurrentExports.seconds} s`,
)
if (concurrent.some((e) => e.status !== 200 || e.records !== lines))
  throw new Error('a concurrent export failed or came back short')

let n = 0
const create = await load(
  `POST /use_cases on ${useCases} rows (50 connections)`,
  {
    url: `${base}${P}/use_cases`,
    method: 'POST',
    headers: json,
    connections: 50,
    duration,
    requests: [
      { setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `Scale create ${process.pid}-${n++}` }) }) },
    ],
  },
  201,
)
runs.push(create)
console.log(`  ${create.name}: ${create.requests_per_s} req/s  p50 ${create.p50_ms} ms  p99 ${create.p99_ms} ms`)

const peakRssMb = Math.round(service.peakRssMb())
await service.stop()
await database.drop()

const worstFilteredP50 = Math.max(...Object.values(filtered).map((r) => r.p50_ms))
const deepRatio = deep.p50_ms / first.p50_ms
const report = {
  date: new Date().toISOString(),
  dialect: database.dialect,
  use_cases: useCases,
  audit_logs: auditLogs,
  seed_seconds: Math.round(seedSeconds),
  deep_page: deepPage,
  walk_seconds: Math.round(walkSeconds * 10) / 10,
  export: exported,
  concurrent_exports: concurrentExports,
  peak_rss_mb: peakRssMb,
  runs,
  targets: {
    [`page ${deepPage} within 1.5× of page 1 (p50)`]: {
      value: `${deep.p50_ms} vs ${first.p50_ms} ms`,
      met: deep.p50_ms <= first.p50_ms * 1.5,
    },
    [`filtered audit query p50 ≤ 10 ms at ${auditLogs} records`]: {
      value: `worst ${worstFilteredP50} ms`,
      met: worstFilteredP50 <= 10,
    },
    'peak RSS ≤ 200 MB': { value: `${peakRssMb} MB`, met: peakRssMb <= 200 },
    "another tenant's reads p99 ≤ 50 ms during 3 concurrent full exports": {
      value: `${duringExports.p99_ms} ms`,
      met: duringExports.p99_ms <= 50,
    },
  },
}
const stamp = report.date.slice(0, 19).replaceAll(':', '-')
writeFileSync(join(resultsDir, `${stamp}-scale-${database.dialect}.json`), `${JSON.stringify(report, null, 2)}\n`)
const md = [
  `# Scale benchmark (${database.dialect})`,
  '',
  `${report.date.slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}. One tenant seeded by \`aigov seed\` with ${useCases} use cases and ` +
    `${auditLogs} audit records (${report.seed_seconds} s, planner statistics included). Reads: one client, one request after another for ${duration} s each (latency), the read and record caches off (SERVICE_READ_CACHE_MB=0, SERVICE_RECORD_CACHE_MB=0); creates: autocannon at 50 connections. ` +
    `Produced by \`npm run bench:scale\` (SCALE_USE_CASES, SCALE_AUDIT_LOGS, SCALE_DURATION).`,
  '',
  '| measurement | p50 ms | p99 ms | req/s | errors |',
  '|---|---:|---:|---:|---:|',
  ...runs.map((r) => `| ${r.name} | ${r.p50_ms} | ${r.p99_ms} | ${r.requests_per_s} | ${r.errors} |`),
  '',
  `Export of all audit records (NDJSON): ${exported.records} records, ${exported.mb} MB in ${exported.seconds} s (${exported.records_per_s} records/s); ` +
    `service RSS ${exported.rss_before_mb} MB before, ${exported.rss_peak_during_mb} MB at most during it. Three such exports at once: ${concurrentExports.seconds} s. Walking page by page to page ${deepPage}: ${report.walk_seconds} s. ` +
    `Peak RSS over the run: ${peakRssMb} MB. Deep page / first page p50: ${deepRatio.toFixed(2)}×.`,
  '',
  '| target | measured | met |',
  '|---|---:|:---:|',
  ...Object.entries(report.targets).map(([name, t]) => `| ${name} | ${t.value} | ${t.met ? 'yes' : 'no'} |`),
  '',
].join('\n')
writeFileSync(join(resultsDir, `latest-scale-${database.dialect}.md`), md)
console.log(`\n${md}`)
if (runs.some((r) => r.errors > 0)) process.exitCode = 1
