// Shared by the benchmarks: a database to run against, the service as a separate production-mode process,
// its peak memory, and autocannon runs summarised the same way everywhere.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import pg from 'pg'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const CLI = join(ROOT, 'dist/service/aigov.js')
export const P = '/api/v1/integration'
export const TENANT = 'bench'
export const API_KEY = 'sk_bench_admin_key_0123456789abcdefghijklmnopqrstuv'
/** Lets the bench read each service's `GET /metrics`. */
const METRICS_TOKEN = 'bench-metrics-token-0123456789'
/** prom-client's default: its event loop delay histogram times a timer due this often. */
const LOOP_SAMPLING_MS = 10
const START_WORDS = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start.split(' ')
/** The Node flags `npm start` runs the service with (its heap sizes), so the benchmarks measure the service as it is run. */
const START_FLAGS = START_WORDS.filter((word) => word.startsWith('--'))
/** The environment `npm start` sets (`NAME=value` before the command), given to the benchmarked service too. */
export const START_ENV = Object.fromEntries(
  START_WORDS.slice(0, START_WORDS.indexOf('node')).map((word) => word.split('=')),
)
/** The V8 heap cap among them. */
export const START_HEAP_MB = Number(
  START_FLAGS.find((flag) => flag.startsWith('--max-old-space-size='))?.split('=')[1] ?? 0,
)

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these. */
const CLOCK_TICKS = 100

/**
 * A process and its descendants (a cluster's primary and its workers); Linux. Only the main threads' children are
 * read: cluster.fork runs on a process's main thread, and a file per thread would be read on every memory sample.
 */
function processTree(pid) {
  const pids = [pid]
  for (let i = 0; i < pids.length; i++) {
    try {
      pids.push(
        ...readFileSync(`/proc/${pids[i]}/task/${pids[i]}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
      )
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

/** `figure` of the text of /proc/<pid>/<file>, summed over the process and its descendants (those gone count 0). */
function sumOverTree(pid, file, figure) {
  let sum = 0
  for (const p of processTree(pid)) {
    try {
      sum += figure(readFileSync(`/proc/${p}/${file}`, 'utf8'))
    } catch {
      // gone meanwhile
    }
  }
  return sum
}

/**
 * The CPU time (user + system) a process has used so far by the text of its /proc/<pid>/stat, ms; with `reaped`,
 * that of its children that have exited too.
 */
function cpuOfStat(stat, reaped = false) {
  const fields = stat.split(') ')[1].split(' ')
  const own = Number(fields[11]) + Number(fields[12])
  return ((reaped ? own + Number(fields[13]) + Number(fields[14]) : own) * 1000) / CLOCK_TICKS
}

/** CPU time a process and its descendants have used so far (user + system), ms; Linux. */
export function processCpuMs(pid) {
  return sumOverTree(pid, 'stat', cpuOfStat)
}

/**
 * CPU time this machine's PostgreSQL server processes have used so far (user + system), ms; undefined when none runs
 * here (the database is elsewhere). A backend that has exited (a pooled connection closed when idle) counts in the
 * time of the server's main process, which reaped it.
 */
export function postgresCpuMs() {
  let sum
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres')
        sum = (sum ?? 0) + cpuOfStat(readFileSync(`/proc/${entry}/stat`, 'utf8'), true)
    } catch {
      // gone meanwhile
    }
  }
  return sum
}

const PEAK_RSS = /VmHWM:\s+(\d+)/
const RSS = /VmRSS:\s+(\d+)/
/** A memory figure of /proc/<pid>/status (PEAK_RSS, RSS), kB, summed over the process and its descendants. */
const treeMemoryKb = (pid, pattern) => sumOverTree(pid, 'status', (status) => Number(pattern.exec(status)?.[1] ?? 0))

/** The machine's CPU time so far, busy and in all, over every core (ms); Linux. */
export function machineCpuMs() {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .split(/\s+/)
    .slice(1, 9)
    .map(Number)
  const busy = user + nice + system + irq + softirq + steal
  return { busy: (busy * 1000) / CLOCK_TICKS, all: ((busy + idle + iowait) * 1000) / CLOCK_TICKS }
}

/** `npm start`'s flags with the heap cap set to `mb` (0: none). */
export const startArgs = (mb) => [
  ...START_FLAGS.filter((flag) => !flag.startsWith('--max-old-space-size=')),
  ...(mb > 0 ? [`--max-old-space-size=${mb}`] : []),
]

/** `--name value` flags, else the environment variable, else the default. */
export function setting(name, env, fallback) {
  const i = process.argv.indexOf(`--${name}`)
  const raw = i > 0 ? process.argv[i + 1] : process.env[env]
  return raw === undefined || raw === '' ? fallback : typeof fallback === 'number' ? Number(raw) : raw
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

/** A fresh database: a temporary SQLite file, or a PostgreSQL schema of its own when DATABASE_URL is PostgreSQL. */
export async function freshDatabase() {
  const url = process.env.DATABASE_URL
  if (url?.startsWith('postgres')) {
    const schema = `bench_${Date.now().toString(36)}`
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query(`create schema ${schema}`)
    await client.end()
    return {
      dialect: 'postgres',
      url: `${url}${url.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`,
      async drop() {
        const c = new pg.Client({ connectionString: url })
        await c.connect()
        await c.query(`drop schema ${schema} cascade`)
        await c.end()
      },
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'aigov-bench-'))
  return {
    dialect: 'sqlite',
    url: `sqlite:${join(dir, 'bench.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  }
}

/**
 * PostgreSQL: fresh planner statistics of every table of the bench's schema, as autovacuum keeps them on a database
 * in service. The bench fills its tables seconds before it measures them, sooner than autovacuum looks (once a
 * minute), and a table never analyzed is planned from guesses: an update of one use case read the tenant's every
 * record through an index of (tenant, owner, id). SQLite: nothing to do (it plans without statistics).
 */
export async function analyze(database) {
  if (database.dialect !== 'postgres') return
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    const { rows } = await client.query('select tablename from pg_tables where schemaname = current_schema()')
    // One table at a time: a bare `analyze` reads every table of the database, other schemas' too.
    for (const { tablename } of rows) await client.query(`analyze "${tablename}"`)
  } finally {
    await client.end()
  }
}

/**
 * Starts `aigov serve` in production mode and resolves once /readyz answers 200, with the time that took.
 * Samples the process's peak resident memory (VmHWM) until stopped.
 */
export async function startService(databaseUrl, extraEnv = {}, nodeArgs = startArgs(START_HEAP_MB)) {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      ...START_ENV,
      NODE_ENV: 'production',
      SERVICE_JWT_SECRET: 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz',
      LOG_LEVEL: 'warn',
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: String(port),
      SERVICE_API_KEY: API_KEY,
      SERVICE_TENANT: TENANT,
      DATABASE_URL: databaseUrl,
      // The bench is one client hammering one key: lift the limits far above what it can reach.
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_TOKEN_PER_MINUTE: '1000000',
      METRICS_TOKEN,
      // A pool size to try (`DATABASE_POOL_SIZE=5 npm run bench`): the bench otherwise measures the default.
      ...(process.env.DATABASE_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE } : {}),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  // A benchmark that throws must not leave its service running.
  process.once('exit', () => child.kill())
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const base = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited: ${output}`)
    try {
      if ((await fetch(`${base}/readyz`)).ok) break
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 60_000) throw new Error(`service did not become ready: ${output}`)
    await new Promise((r) => setTimeout(r, 5))
  }
  const readyMs = performance.now() - started
  let peakRssKb = 0
  // With workers, the sum of each process's own peak: at least the peak of their sum.
  const sample = () => {
    peakRssKb = Math.max(peakRssKb, treeMemoryKb(child.pid, PEAK_RSS))
  }
  const sampler = setInterval(sample, 100)
  return {
    base,
    pid: child.pid,
    readyMs,
    output: () => output,
    peakRssMb: () => (sample(), peakRssKb / 1024),
    /** CPU time the service has used so far (user + system; with its workers), ms; Linux. */
    cpuMs: () => processCpuMs(child.pid),
    /** Resident memory right now, MB. */
    rssMb: () => treeMemoryKb(child.pid, RSS) / 1024,
    /**
     * The p99 of the service's event loop delay since the last call, ms: how late a timer due every 10 ms fired,
     * that is how long a turn of the loop kept waiting what came due (a request that had arrived) meanwhile. From
     * prom-client's gauge, reset by each scrape; it counts the whole time between the timer's runs, the 10 ms included.
     */
    async loopDelayP99Ms() {
      const text = await (
        await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
      ).text()
      const value = /^aigov_nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(text)?.[1]
      return value === undefined
        ? undefined
        : Math.max(0, Math.round((Number(value) * 1000 - LOOP_SAMPLING_MS) * 10) / 10)
    },
    async stop() {
      clearInterval(sampler)
      sample()
      if (process.env.BENCH_DEBUG_MEMORY) console.log(readFileSync(`/proc/${child.pid}/smaps_rollup`, 'utf8'))
      if (child.exitCode !== null) return
      await new Promise((resolve) => {
        child.once('exit', resolve)
        child.kill('SIGTERM')
      })
    },
  }
}

export async function token(base) {
  const res = await fetch(`${base}${P}/auth/token`, {
    method: 'POST',
    headers: { 'x-api-key': API_KEY, 'x-tenant': TENANT },
  })
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`)
  return (await res.json()).access_token
}

/**
 * One autocannon run; fails loudly if anything but the expected status came back. `onResponse(client, status,
 * bytes, ms)` sees every answer (the mixes tell reads from writes with it).
 */
export async function load(name, options, expectedStatus = 200) {
  const { onResponse, ...rest } = options
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon({ connections: 50, duration: 10, ...rest, expectBody: undefined }, (err, res) =>
      err ? reject(err) : resolve(res),
    )
    if (onResponse) instance.on('response', onResponse)
  })
  const statusCounts = result.statusCodeStats ?? {}
  const unexpected = Object.entries(statusCounts).filter(([code]) => Number(code) !== expectedStatus)
  const summary = {
    name,
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    max_ms: result.latency.max,
    total: result.requests.total,
    errors: result.errors + result.timeouts + unexpected.reduce((n, [, v]) => n + v.count, 0),
  }
  if (summary.errors > 0) summary.unexpected = Object.fromEntries(unexpected.map(([code, v]) => [code, v.count]))
  return summary
}
