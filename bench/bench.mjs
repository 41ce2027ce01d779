// npm run bench: throughput and latency of the main endpoints against the same-run ceiling (a bare node:http
// server sending the list endpoint's bytes), the service's peak memory and its start-to-ready time.
//
//   --duration <s>      BENCH_DURATION      seconds per endpoint (default 10)
//   --connections <n>   BENCH_CONNECTIONS   concurrent connections (default 50)
//   --only <names>      BENCH_ONLY          comma-separated subset: livez,list,get,query,mix,create,webhooks,token,uncached
//   --profile           BENCH_PROFILE=1     write a CPU profile of the service (node --cpu-prof) to bench/results/
//   --heap-mb <n>       BENCH_HEAP_MB       the service's V8 heap cap (--max-old-space-size); default: what `npm start` uses, 0 = none
//   --workers <n>       BENCH_WORKERS       SERVICE_WORKERS of the service (default 1); its CPU and memory are summed over its processes
//   DATABASE_URL=postgres://…               PostgreSQL instead of SQLite
//   DATABASE_POOL_SIZE=<n>                  the service's PostgreSQL pool size (default: the service's own)
import { fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  analyze,
  freePort,
  freshDatabase,
  startArgs,
  load,
  machineCpuMs,
  P,
  postgresCpuMs,
  processCpuMs,
  ROOT,
  setting,
  START_ENV,
  START_HEAP_MB,
  startService,
  token,
} from './lib.mjs'
import { createMixTenants, mix, MIX_TENANTS, MIX_USE_CASES, seedMixTenants } from './mix.mjs'

const duration = setting('duration', 'BENCH_DURATION', 10)
const connections = setting('connections', 'BENCH_CONNECTIONS', 50)
const only = setting('only', 'BENCH_ONLY', '').split(',').filter(Boolean)
const profile = process.argv.includes('--profile') || process.env.BENCH_PROFILE === '1'
const heapMb = setting('heap-mb', 'BENCH_HEAP_MB', START_HEAP_MB)
const workers = setting('workers', 'BENCH_WORKERS', 1)
// Every start of the service runs as many workers; the tables of a cluster are published beside the others.
const workersEnv = { SERVICE_WORKERS: String(workers) }
const suffix = workers > 1 ? `-workers-${workers}` : ''
const resultsDir = join(ROOT, 'bench/results')
mkdirSync(resultsDir, { recursive: true })

const LIST = 'GET /use_cases (50)'
const GET = 'GET /use_cases/{id}'
// The read cache's answers never reused (as after every write of the tenant); records stay kept rendered.
const UNCACHED = '— answers not cached'
// Nothing kept: every record rendered by the database on every read.
const NOTHING_CACHED = '— nothing cached'
const MIX_100 = 'mix: 100 % reads'
const MIX_99 = 'mix: 99 % reads, 1 % PATCH'
const MIX_90 = 'mix: 90 % reads, 10 % PATCH'
const PATCH_ONE_TENANT = `PATCH /use_cases/{id}, one tenant's ${MIX_USE_CASES} at random`
const CREATE = 'POST /use_cases'
const TARGETS = {
  list_ratio: 0.4,
  get_ratio: 0.6,
  read_p99_ms: 10,
  peak_rss_mb: 200,
  start_ms: 1000,
  webhook_create_drop_percent: 10,
  webhook_lag_p99_ms: 1000,
  mix_read_p99_ms: 15,
}
// Ratios to the ceiling that hold whatever the tenant's writes do to the read cache (issue 18), per database.
const REAL_LOAD_TARGETS = {
  sqlite: { uncached_list: 0.35, uncached_get: 0.5, mix_90: 0.35, mix_99: 0.45, create: 0.12 },
  postgres: { uncached_list: 0.2, uncached_get: 0.3, mix_90: 0.2, mix_99: 0.25, create: 0.06 },
}
const wanted = (...names) => only.length === 0 || names.some((name) => only.includes(name))

const database = await freshDatabase()
console.log(
  `bench: ${database.dialect}, ${connections} connections, ${duration} s per endpoint${workers > 1 ? `, ${workers} workers` : ''}`,
)

// Start once on the empty database (migrations, bootstrap, starter library), then measure a plain restart.
const cold = await startService(database.url, workersEnv)
await cold.stop()
const mixKeys = wanted('mix', 'uncached') ? createMixTenants(database.url) : []
const nodeArgs = [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${resultsDir}`] : []), ...startArgs(heapMb)]
// Private targets allowed: the webhook receiver of the events run is on this machine.
const service = await startService(database.url, { ...workersEnv, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, nodeArgs)
const base = service.base
const bearer = await token(base)
const auth = { authorization: `Bearer ${bearer}` }
const json = { ...auth, 'content-type': 'application/json' }

// A full page of use cases to list, and one to get.
const ids = []
for (let i = 0; i < 60; i++) {
  const res = await fetch(`${base}${P}/use_cases`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({
      name: `Seeded use case ${i}`,
      description: 'Scores retail credit applications with gradient-boosted trees.',
      risk_category_level: 'high',
      regions: ['EU', 'US'],
      industries: ['finance'],
    }),
  })
  if (res.status !== 201) throw new Error(`seed: ${res.status} ${await res.text()}`)
  ids.push((await res.json()).id)
}
const seedStarted = performance.now()
const mixTenants = await seedMixTenants(base, mixKeys)
if (mixKeys.length > 0)
  console.log(
    `  seeded ${MIX_TENANTS} tenants × ${MIX_USE_CASES} use cases (owner, custom field) in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
  )
await analyze(database)
const listUrl = `${base}${P}/use_cases?page_limit=50`
const listBody = Buffer.from(await (await fetch(listUrl, { headers: auth })).arrayBuffer())
if (JSON.parse(listBody).items.length !== 50) throw new Error('the list page is not full')

// The ceiling, as a separate process like the service, answering the list's exact bytes.
const bodyFile = join(tmpdir(), `aigov-bench-body-${process.pid}.json`)
writeFileSync(bodyFile, listBody)
const ceilingPort = await freePort()
const ceiling = fork(join(ROOT, 'bench/ceiling.mjs'), [bodyFile, String(ceilingPort)], { stdio: 'inherit' })
await new Promise((resolve) => ceiling.once('message', resolve))

const common = { connections, duration }
const runs = []
// `pid`: the process answering, whose CPU per request is reported (unlike throughput, hardly moved by what else runs).
// PostgreSQL's own CPU, when it runs on this machine: on two cores it competes with the service for them.
const databaseCpuSoFar = database.dialect === 'postgres' ? postgresCpuMs : () => undefined
/** `work`'s result with the CPU time `pid` and the database used meanwhile, and the machine's busy and total CPU time. */
const measured = async (pid, work) => {
  const cpuAtStart = processCpuMs(pid)
  const databaseAtStart = databaseCpuSoFar()
  const machineAtStart = machineCpuMs()
  const result = await work()
  const machine = machineCpuMs()
  const databaseNow = databaseCpuSoFar()
  return {
    ...result,
    cpuMs: processCpuMs(pid) - cpuAtStart,
    machineBusyMs: machine.busy - machineAtStart.busy,
    machineMs: machine.all - machineAtStart.all,
    databaseCpuMs:
      databaseNow === undefined || databaseAtStart === undefined ? undefined : databaseNow - databaseAtStart,
  }
}
/** CPU µs per request (the service's, and the database's where it is measured) and how busy the machine was, over one or several measured runs. */
const cpuFigures = (list) => {
  const sum = (key) => list.reduce((n, r) => n + r[key], 0)
  return {
    cpu_us_per_request: Math.round((sum('cpuMs') * 1000) / sum('total')),
    database_cpu_us_per_request: list.every((r) => r.databaseCpuMs !== undefined)
      ? Math.round((sum('databaseCpuMs') * 1000) / sum('total'))
      : undefined,
    // How much of the machine's cores everything on it used meanwhile: near 100 %, CPU is what the line is short of.
    machine_busy_percent: Math.round((sum('machineBusyMs') / sum('machineMs')) * 100),
  }
}
// `target`: a service (or { pid } of another process), whose event loop delay p99 during the line is reported too,
// unless it runs workers (each would answer GET /metrics for itself alone).
const run = async (name, options, status, short, target = service) => {
  if (short && only.length > 0 && !only.includes(short)) return
  const loopDelayP99Ms = workers === 1 ? target.loopDelayP99Ms : undefined
  // Read once before the line, so that the figure after it covers the line alone.
  await loopDelayP99Ms?.()
  const { cpuMs, databaseCpuMs, machineBusyMs, machineMs, ...summary } = await measured(target.pid, () =>
    load(name, { ...common, ...options }, status),
  )
  const result = {
    ...summary,
    ...cpuFigures([{ cpuMs, databaseCpuMs, machineBusyMs, machineMs, total: summary.total }]),
    loop_delay_p99_ms: await loopDelayP99Ms?.(),
  }
  runs.push(result)
  // The service's peak RSS so far: which line's load grows its memory.
  const peak = target === service ? `  peak RSS ${Math.round(service.peakRssMb())} MB` : ''
  console.log(
    `  ${name.padEnd(22)} ${String(result.requests_per_s).padStart(7)} req/s  p50 ${result.p50_ms} ms  p99 ${result.p99_ms} ms${result.loop_delay_p99_ms === undefined ? '' : `  loop delay p99 ${result.loop_delay_p99_ms} ms`}${result.database_cpu_us_per_request === undefined ? '' : `  database CPU ${result.database_cpu_us_per_request} µs/request`}${peak}${result.errors ? `  ERRORS ${JSON.stringify(result.unexpected ?? result.errors)}` : ''}`,
  )
  return result
}

// The ceiling moves from one measurement to the next on this machine (28 000–57 000 req/s in one day's runs, the
// load generator being the limit): it is measured at the start, in the middle and at the end, and the median is
// the reference of every ratio.
const ceilingRuns = []
const measureCeiling = async () => {
  ceilingRuns.push(
    await run('ceiling (node:http)', { url: `http://127.0.0.1:${ceilingPort}/` }, undefined, undefined, {
      pid: ceiling.pid,
    }),
  )
  runs.pop()
}
await measureCeiling()
await run('GET /livez', { url: `${base}/livez` }, 200, 'livez')
await run(LIST, { url: listUrl, headers: auth }, 200, 'list')
await run(GET, { url: `${base}${P}/use_cases/${ids[30]}`, headers: auth }, 200, 'get')
await run(
  'POST /audit_logs/query',
  {
    url: `${base}${P}/audit_logs/query`,
    method: 'POST',
    headers: json,
    body: JSON.stringify({ resource_type: ['use_case'], page_limit: 50 }),
  },
  200,
  'query',
)
// Many tenants at once, reading and writing: every PATCH empties its tenant's read cache.
const mixReadP99 = {}
for (const [name, writeShare] of [
  [MIX_100, 0],
  [MIX_99, 0.01],
  [MIX_90, 0.1],
]) {
  if (!wanted('mix')) break
  const { options, readP99, writes } = mix(base, mixTenants, writeShare)
  const result = await run(name, options, 200, 'mix')
  result.read_p99_ms = mixReadP99[name] = readP99()
  if (writeShare > 0) result.writes = writes()
  console.log(
    `    reads' own p99: ${result.read_p99_ms} ms${result.writes ? `; PATCHes' p50 ${result.writes.p50_ms} ms, p99 ${result.writes.p99_ms} ms` : ''}; machine ${result.machine_busy_percent} % busy`,
  )
}
// One tenant's integrations all updating its records at once: every connection's PATCH may meet another's record.
if (wanted('mix')) await run(PATCH_ONE_TENANT, mix(base, mixTenants.slice(0, 1), 1).options, 200, 'mix')
await measureCeiling()
let n = 0
const createOptions = {
  url: `${base}${P}/use_cases`,
  method: 'POST',
  headers: json,
  requests: [
    {
      setupRequest: (req) => ({
        ...req,
        body: JSON.stringify({
          name: `Bench use case ${process.pid}-${n++}`,
          description: 'Created under load.',
          regions: ['EU'],
        }),
      }),
    },
  ],
}
await run(CREATE, createOptions, 201, 'create')

// Events: the same creates with an endpoint subscribed to every event, then the delivery lag at a steady 500 creates/s.
let webhookFigures
if (only.length === 0 || only.includes('webhooks')) {
  // The receiver runs in a process of its own, like the ceiling, so that it does not share autocannon's event loop.
  const receiver = fork(join(ROOT, 'bench/receiver.mjs'), [], { stdio: 'inherit' })
  const ask = (message) =>
    new Promise((resolve) => {
      receiver.once('message', resolve)
      if (message) receiver.send(message)
    })
  const { port } = await ask()
  const endpoint = await (
    await fetch(`${base}${P}/webhook_endpoints`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ url: `http://127.0.0.1:${port}/`, events: ['*'], enabled: false }),
    })
  ).json()
  const subscribe = async (enabled) => {
    const res = await fetch(`${base}${P}/webhook_endpoints/${endpoint.id}`, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ enabled }),
    })
    if (res.status !== 200) throw new Error(`webhook endpoint: ${res.status} ${await res.text()}`)
  }
  const received = async () => (await ask('stats')).received
  // Until no event has arrived for `quietMs`: everything queued so far is delivered.
  const settle = async (quietMs) => {
    for (let last = -1, now = await received(); now !== last; now = await received()) {
      last = now
      await new Promise((r) => setTimeout(r, quietMs))
    }
  }
  // Creates without and with the subscriber in alternating slices (without, with, with, without, …), after a slice of
  // each to warm up: two 10 s runs one after the other differed by more than the effect measured (the machine's
  // throughput drifts by ±15 % from one to the next, and a service's first run of creates is the slower, its code
  // not yet optimized). Enabling the endpoint starts it at the log's end, so a slice with it sends only its own
  // events, and it ends once they are delivered: what the deliveries cost counts in it.
  const slice = async (withHook, target = { pid: service.pid, options: createOptions, quietMs: 500 }) => {
    if (withHook) await subscribe(true)
    return measured(target.pid, async () => {
      const before = withHook ? await received() : 0
      const result = await load(
        `${CREATE} ${withHook ? 'with' : 'without'} a webhook (slice)`,
        { ...common, ...target.options, duration: sliceSeconds },
        201,
      )
      if (withHook) {
        // Under full load the sends fall behind the creates: what is sent after the slice counts in its CPU, not its time.
        const duringLoad = (await received()) - before
        await settle(target.quietMs)
        Object.assign(result, { sentDuringLoad: duringLoad, sent: (await received()) - before })
        await subscribe(false)
      }
      return result
    })
  }
  const sliceSeconds = Math.max(1, duration / 4)
  const sum = (list, key) => list.reduce((n, r) => n + r[key], 0)
  const sliced = (name, list) => ({
    name,
    requests_per_s: Math.round(sum(list, 'total') / (list.length * sliceSeconds)),
    total: sum(list, 'total'),
    errors: sum(list, 'errors'),
    p50_ms: list.map((r) => r.p50_ms).sort((a, b) => a - b)[list.length >> 1],
    p99_ms: Math.max(...list.map((r) => r.p99_ms)),
    ...cpuFigures(list),
  })
  const alternating = async (target) => {
    await slice(false, target)
    await slice(true, target)
    const slices = { without: [], with: [] }
    for (const withHook of [false, true, true, false, false, true, true, false])
      slices[withHook ? 'with' : 'without'].push(await slice(withHook, target))
    return slices
  }
  const drop = (without, withHook) => Math.round((1 - withHook.requests_per_s / without.requests_per_s) * 1000) / 10
  const sentInTime = (list) => Math.round((sum(list, 'sentDuringLoad') / sum(list, 'sent')) * 100)
  const slices = await alternating()
  const without = sliced(
    `${CREATE} — ${slices.without.length} slices of ${sliceSeconds} s without a webhook`,
    slices.without,
  )
  const withHook = sliced(
    `${CREATE} — ${slices.with.length} slices of ${sliceSeconds} s with a * webhook, between them`,
    slices.with,
  )
  runs.push(without, withHook)
  for (const r of [without, withHook])
    console.log(`  ${r.name}: ${r.requests_per_s} req/s, service CPU ${r.cpu_us_per_request} µs per create`)
  await ask('reset')
  await subscribe(true)
  const steady = await run(
    'POST /use_cases at 500/s, * webhook',
    { ...createOptions, overallRate: 500, connections: 20 },
    201,
    'webhooks',
  )
  await settle(2000)
  const { lags, unique, duplicates } = await ask('stats')
  const lagAt = (q) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))] ?? null
  // The slices again on an instance that leaves delivery to another (WEBHOOK_DELIVERY=false): here the measured
  // service sends. After the lag's line, which they would otherwise measure on a larger database.
  await subscribe(false)
  const apiOnly = await startService(database.url, { ...workersEnv, WEBHOOK_DELIVERY: 'false' }, nodeArgs)
  const apiOnlyJson = { authorization: `Bearer ${await token(apiOnly.base)}`, 'content-type': 'application/json' }
  // The sending service hears of another process's commits by polling the log every second: a slice ends once
  // nothing has arrived for longer than that, or its last events would be sent in the next slice.
  const apiOnlySlices = await alternating({
    pid: apiOnly.pid,
    options: { ...createOptions, url: `${apiOnly.base}${P}/use_cases`, headers: apiOnlyJson },
    quietMs: 1500,
  })
  await apiOnly.stop()
  const apiOnlyWithout = sliced(
    `${CREATE} on an instance with WEBHOOK_DELIVERY=false — ${apiOnlySlices.without.length} slices without a webhook`,
    apiOnlySlices.without,
  )
  const apiOnlyWith = sliced(
    `${CREATE} on an instance with WEBHOOK_DELIVERY=false — ${apiOnlySlices.with.length} slices with a * webhook sent by another, between them`,
    apiOnlySlices.with,
  )
  runs.push(apiOnlyWithout, apiOnlyWith)
  // autocannon counts the requests answered within the run; the connections' last requests may still create after it.
  webhookFigures = {
    create_drop: drop(without, withHook),
    create_drop_delivered_elsewhere: drop(apiOnlyWithout, apiOnlyWith),
    // Of the events of the slices with the webhook, the share received before their slice ended.
    sent_during_slices_percent: sentInTime(slices.with),
    sent_during_slices_elsewhere_percent: sentInTime(apiOnlySlices.with),
    // Service CPU per create: unlike throughput, hardly moved by what else runs on the machine.
    cpu_ms_per_create: Math.round(without.cpu_us_per_request / 10) / 100,
    cpu_ms_per_create_with_hook: Math.round(withHook.cpu_us_per_request / 10) / 100,
    lag_p50_ms: lagAt(0.5),
    lag_p99_ms: lagAt(0.99),
    lag_max_ms: lags[lags.length - 1] ?? null,
    delivered: unique,
    duplicates,
    created: steady.total,
  }
  console.log(
    `  webhooks: create throughput ${webhookFigures.create_drop} % lower with a * subscriber (${webhookFigures.create_drop_delivered_elsewhere} % on an instance whose events another sends; ${webhookFigures.sent_during_slices_percent} % and ${webhookFigures.sent_during_slices_elsewhere_percent} % of the slices' events sent before they ended); service CPU per create ${webhookFigures.cpu_ms_per_create} ms without, ${webhookFigures.cpu_ms_per_create_with_hook} ms with (deliveries included); delivery lag p50 ${webhookFigures.lag_p50_ms} ms, p99 ${webhookFigures.lag_p99_ms} ms, max ${webhookFigures.lag_max_ms} ms (${unique} events delivered, ${duplicates} twice, of ${steady.total} answered creates at ${steady.requests_per_s}/s)`,
  )
  await fetch(`${base}${P}/webhook_endpoints/${endpoint.id}`, { method: 'DELETE', headers: auth })
  receiver.kill()
}
await run(
  'POST /auth/token',
  {
    url: `${base}${P}/auth/token`,
    method: 'POST',
    headers: { 'x-api-key': (await import('./lib.mjs')).API_KEY, 'x-tenant': 'bench' },
  },
  200,
  'token',
)

let peakRssMb = Math.round(service.peakRssMb())
await service.stop()

// Reads of a mix tenant's use cases (owner and custom field values included) whose answers are never reused: with
// the records kept rendered (what a read costs right after a write of the tenant), and with nothing kept at all.
if (wanted('uncached')) {
  const [tenant] = mixTenants
  for (const [label, env] of [
    [UNCACHED, { SERVICE_READ_CACHE_MB: '0' }],
    [NOTHING_CACHED, { SERVICE_READ_CACHE_MB: '0', SERVICE_RECORD_CACHE_MB: '0' }],
  ]) {
    const uncached = await startService(database.url, { ...workersEnv, ...env }, nodeArgs)
    await run(
      `${LIST} ${label}`,
      { url: `${uncached.base}${P}/use_cases?page_limit=50`, headers: tenant.auth },
      200,
      undefined,
      uncached,
    )
    await run(
      `${GET} ${label}`,
      { url: `${uncached.base}${P}/use_cases/${tenant.ids[30]}`, headers: tenant.auth },
      200,
      undefined,
      uncached,
    )
    peakRssMb = Math.max(peakRssMb, Math.round(uncached.peakRssMb()))
    await uncached.stop()
  }
}
await database.drop()
await measureCeiling()
ceiling.kill()
const ceilingRun = [...ceilingRuns].sort((a, b) => a.requests_per_s - b.requests_per_s)[1]
ceilingRun.name = `ceiling (node:http), median of ${ceilingRuns.map((r) => r.requests_per_s).join(' / ')}`
runs.unshift(ceilingRun)

for (const r of runs) r.ratio_to_ceiling = Math.round((r.requests_per_s / ceilingRun.requests_per_s) * 1000) / 1000
const byName = Object.fromEntries(runs.map((r) => [r.name, r]))
const none = { ratio_to_ceiling: 0, p99_ms: 0 }
const list = byName[LIST] ?? none
const get = byName[GET] ?? none
const percent = (r) => `${Math.round(r.ratio_to_ceiling * 100)} %`
const readP99 = Math.max(list.p99_ms, get.p99_ms)
const real = REAL_LOAD_TARGETS[database.dialect]
const ratioTarget = (label, name, ratio) => {
  const r = byName[name]
  return r ? [[`${label} ≥ ${Math.round(ratio * 100)} % of ceiling`, percent(r), r.ratio_to_ceiling >= ratio]] : []
}
const mixP99 = Math.max(0, ...Object.values(mixReadP99))
const targets = [
  ...ratioTarget('uncached list (answers not cached)', `${LIST} ${UNCACHED}`, real.uncached_list),
  ...ratioTarget('uncached get (answers not cached)', `${GET} ${UNCACHED}`, real.uncached_get),
  ...ratioTarget('mix with 10 % writes', MIX_90, real.mix_90),
  ...ratioTarget('mix with 1 % writes', MIX_99, real.mix_99),
  ...ratioTarget('POST /use_cases', CREATE, real.create),
  ...(Object.keys(mixReadP99).length > 0
    ? [['read p99 in the mixes ≤ 15 ms', `${mixP99} ms`, mixP99 <= TARGETS.mix_read_p99_ms]]
    : []),
  ['cached list ≥ 40 % of ceiling', percent(list), list.ratio_to_ceiling >= TARGETS.list_ratio],
  ['cached get ≥ 60 % of ceiling', percent(get), get.ratio_to_ceiling >= TARGETS.get_ratio],
  ['cached read p99 ≤ 10 ms', `${readP99} ms`, readP99 <= TARGETS.read_p99_ms],
  ['peak RSS ≤ 200 MB', `${peakRssMb} MB`, peakRssMb <= TARGETS.peak_rss_mb],
  ['start to ready ≤ 1 s', `${Math.round(service.readyMs)} ms`, service.readyMs <= TARGETS.start_ms],
  ...(webhookFigures
    ? [
        [
          'create with a * webhook ≥ 90 % of without',
          `${webhookFigures.create_drop} % lower`,
          webhookFigures.create_drop !== null && webhookFigures.create_drop <= TARGETS.webhook_create_drop_percent,
        ],
        [
          'webhook delivery lag p99 < 1 s at 500 creates/s',
          `${webhookFigures.lag_p99_ms} ms (${webhookFigures.delivered} delivered of ${webhookFigures.created} answered creates)`,
          webhookFigures.lag_p99_ms !== null &&
            webhookFigures.lag_p99_ms < TARGETS.webhook_lag_p99_ms &&
            webhookFigures.delivered >= webhookFigures.created,
        ],
      ]
    : []),
]
const report = {
  date: new Date().toISOString(),
  dialect: database.dialect,
  workers,
  node: process.version,
  connections,
  duration_s: duration,
  list_body_bytes: listBody.length,
  start_to_ready_ms: { first_start: Math.round(cold.readyMs), restart: Math.round(service.readyMs) },
  peak_rss_mb: peakRssMb,
  runs,
  webhooks: webhookFigures,
  targets: Object.fromEntries(targets.map(([name, value, met]) => [name, { value, met }])),
}
const stamp = report.date.slice(0, 19).replaceAll(':', '-')
writeFileSync(join(resultsDir, `${stamp}-${database.dialect}${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`)

const md = [
  `# Benchmark (${database.dialect}${workers > 1 ? `, ${workers} workers` : ''})`,
  '',
  `${report.date.slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}, ${connections} connections, ${duration} s per endpoint, ` +
    `service in production mode as its own process${workers > 1 ? ` with ${workers} workers (SERVICE_WORKERS=${workers}: a cluster primary and ${workers} worker processes, whose CPU and memory are summed)` : ''} (LOG_LEVEL=warn, ${[...Object.entries(START_ENV).map(([name, value]) => `${name}=${value}`), ...startArgs(heapMb)].join(' ')}${heapMb === START_HEAP_MB ? ' as `npm start` runs it' : ''}). The ceiling is a bare node:http server sending the list ` +
    `endpoint's ${listBody.length} bytes, measured at the start, in the middle and at the end of the run; ratios are against the median. Produced by \`npm run bench\`.`,
  '',
  `The mixes spread over ${MIX_TENANTS} tenants of ${MIX_USE_CASES} use cases each (with an owner and a custom field value), at random: ` +
    'half the first list page of 50, half a use case by id, and the PATCHes change a description. Their "reads p99" leaves the PATCHes out.',
  '',
  '| endpoint | req/s | vs ceiling | p50 ms | p99 ms | reads p99 ms | loop delay p99 ms | CPU µs per request | database CPU µs per request | machine busy | errors |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...runs.map(
    (r) =>
      `| ${r.name} | ${r.requests_per_s} | ${(r.ratio_to_ceiling * 100).toFixed(0)} % | ${r.p50_ms} | ${r.p99_ms} | ${r.read_p99_ms ?? ''} | ${r.loop_delay_p99_ms ?? ''} | ${r.cpu_us_per_request} | ${r.database_cpu_us_per_request ?? ''} | ${r.machine_busy_percent} % | ${r.errors} |`,
  ),
  '',
  `"CPU µs per request" is the answering process's own${workers > 1 ? " (its workers' included)" : ''}; "database CPU" is that of the PostgreSQL server's processes on this machine (SQLite runs in the service, and counts in its CPU); "machine busy" is the share of all the machine's cores that everything on it (load generator, service, database) used during the line.`,
  `"Loop delay p99" is the service's event loop delay during the line${workers > 1 ? ' (not given for workers: each answers GET /metrics for itself)' : ''}, as its \`GET /metrics\` reports it (how late a timer due every 10 ms fired): how long a turn of the loop kept waiting what came due meanwhile. A request that arrives during a turn waits for its end: where this figure comes near the reads' p99, the service's thread is what they wait for; well below it, they wait for the database.`,
  '',
  ...runs
    .filter((r) => r.writes)
    .map((r) => `- ${r.name}: the PATCHes' own p50 ${r.writes.p50_ms} ms, p99 ${r.writes.p99_ms} ms.`),
  '',
  `Peak RSS of the service${workers > 1 ? " (the sum of its processes' own peaks)" : ''}: ${peakRssMb} MB. Start to ready: ${Math.round(service.readyMs)} ms (restart), ${Math.round(cold.readyMs)} ms (first start on an empty database: migrations, tenant, starter library).`,
  '',
  ...(webhookFigures?.cpu_ms_per_create
    ? [
        `Service CPU per create: ${webhookFigures.cpu_ms_per_create} ms without a webhook, ${webhookFigures.cpu_ms_per_create_with_hook} ms with a * webhook (its deliveries included). ` +
          `On an instance with WEBHOOK_DELIVERY=false, whose events the measured service sends from the same machine, creates fell ${webhookFigures.create_drop_delivered_elsewhere} % with the webhook. ` +
          `Under full load the sends fall behind the creates: ${webhookFigures.sent_during_slices_percent} % of the events of the slices with the webhook reached the receiver before their slice ended ` +
          `(${webhookFigures.sent_during_slices_elsewhere_percent} % when the other instance sent them), the rest in the moments after it, whose CPU counts in the CPU per create but whose time does not count in the throughput.`,
        '',
      ]
    : []),
  '| target | measured | met |',
  '|---|---:|:---:|',
  ...targets.map(([name, value, met]) => `| ${name} | ${value} | ${met ? 'yes' : 'no'} |`),
  '',
].join('\n')
// A partial run (--only) is for development: it does not replace the published table.
if (only.length === 0) writeFileSync(join(resultsDir, `latest-${database.dialect}${suffix}.md`), md)
console.log(`\n${md}`)
if (runs.some((r) => r.errors > 0)) process.exitCode = 1
