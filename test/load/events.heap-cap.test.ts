import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import Sqlite from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { STREAMS_PER_KEY } from '../../src/modules/events/events.routes.js'
import { describeEachDialect, freshDatabase, PREFIX, type TestDatabase } from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'

// F1 of issue 52: a read key's event streams, opened from the start of a log of large records and then not read
// (or read slowly), used to hold every batch they read and took the process down under npm start's heap cap.

const TENANT = 'heap'
const KEY = 'sk_events_heap_cap_admin_key_0123456789abcdefghij'
const USE_CASES = 200
const DESCRIPTION_CHARS = 99_000
/** How long a stream may be blocked on a client that takes nothing, here (the default is longer). */
const SLOW_CLIENT_MS = 2000
/**
 * The peak resident set the service may reach through all of it, MiB: holding what the streams read would take GBs.
 * Node.js 24 keeps more resident than 20 for the same heap cap (on PostgreSQL 221 MiB where 20 peaks at 139).
 */
const PEAK_RSS_BOUND_MIB = 256

/** The process's resident set high-water mark (VmHWM), or its resident set now (VmRSS), in MiB (Linux). */
const rssMiB = (pid: number, which = 'VmHWM') =>
  Number(new RegExp(`${which}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`not within ${ms} ms`)))])

/** The tenant's audit record ids after `afterId`, in commit order, read from the database itself. */
async function auditIdsAfter(env: Record<string, string>, afterId: string): Promise<string[]> {
  const sqlText =
    'select id from audit_logs where tenant_id = $1 and seq > (select seq from audit_logs where tenant_id = $1 and id = $2) order by seq'
  if (env.DATABASE_URL.startsWith('sqlite:')) {
    const db = new Sqlite(env.DATABASE_URL.slice('sqlite:'.length), { readonly: true })
    try {
      return (
        db.prepare(sqlText.replaceAll('$1', '@t').replaceAll('$2', '@a')).all({ t: TENANT, a: afterId }) as {
          id: string
        }[]
      ).map((r) => r.id)
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: env.DATABASE_URL })
  await client.connect()
  try {
    return (await client.query<{ id: string }>(sqlText, [TENANT, afterId])).rows.map((r) => r.id)
  } finally {
    await client.end()
  }
}

/** A raw stream request on a socket of its own; what the server sends waits in the kernel until someone reads it. */
function rawStream(
  port: number,
  token: string,
  after: string,
): { socket: Socket; bytes: number; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => undefined)
  socket.write(
    `GET ${PREFIX}/events?after=${after} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
  )
  return { socket, bytes: 0, closed: new Promise<void>((resolve) => socket.on('close', () => resolve())) }
}

/** Reads a stream over fetch until the event `until`, keeping the ids of the complete events. */
async function readEvents(base: string, token: string, lastEventId: string, until: string, ids: string[]) {
  const res = await fetch(`${base}${PREFIX}/events`, {
    headers: { authorization: `Bearer ${token}`, 'last-event-id': lastEventId },
  }).catch(() => undefined)
  if (res?.status !== 200) return `refused: ${res?.status ?? 'unreachable'}`
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return 'closed'
      buffer += decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const id = /^id: (\S+)$/m.exec(block)?.[1]
        if (!id) continue
        ids.push(id)
        if (id === until) {
          await reader.cancel()
          return 'complete'
        }
      }
    }
  } catch {
    return 'closed'
  }
}

describeEachDialect('GET /events under npm start’s heap cap', (dialect) => {
  let db: TestDatabase
  let service: ServiceProcess
  let admin: string
  const call = (path: string, init: RequestInit = {}, token = admin) =>
    fetch(`${service.baseUrl}${PREFIX}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    })
  const readToken = async () => {
    const key = (await (
      await call('/api_keys', {
        method: 'POST',
        body: JSON.stringify({ name: `reader-${Math.random()}`, role: 'read' }),
      })
    ).json()) as { key: string }
    const res = await fetch(`${service.baseUrl}${PREFIX}/auth/token`, {
      method: 'POST',
      headers: { 'x-api-key': key.key, 'x-tenant': TENANT },
    })
    return ((await res.json()) as { access_token: string }).access_token
  }

  beforeAll(async () => {
    db = await freshDatabase(dialect)
    service = await startServiceProcess(
      {
        ...db.env,
        MALLOC_ARENA_MAX: '2',
        SERVICE_JWT_SECRET: 'events-heap-cap-secret-0123456789abcdefghij',
        SERVICE_API_KEY: KEY,
        SERVICE_TENANT: TENANT,
        SERVICE_STARTER_LIBRARY: 'false',
        RATE_LIMIT_PER_MINUTE: '1000000',
        RATE_LIMIT_TOKEN_PER_MINUTE: '1000000',
        EVENTS_SLOW_CLIENT_MS: String(SLOW_CLIENT_MS),
      },
      undefined,
      ['--max-old-space-size=160', '--max-semi-space-size=8'],
    )
    const res = await fetch(`${service.baseUrl}${PREFIX}/auth/token`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'x-tenant': TENANT },
    })
    admin = ((await res.json()) as { access_token: string }).access_token
  }, 30_000)
  afterAll(async () => {
    await service?.stop('SIGKILL')
    await db?.drop()
  })

  it(`keeps ${USE_CASES} large use cases’ streams bounded: non-readers are cut, the process stays up, a resuming reader misses nothing`, async () => {
    const marker = (await (
      await call('/use_cases', { method: 'POST', body: JSON.stringify({ name: 'Marker' }) })
    ).json()) as { id: string }
    const early = ((await (await call(`/audit_logs?resource_id=${marker.id}`)).json()) as { items: { id: string }[] })
      .items[0].id

    // A write key's worth of large records: creates, then one update of each (its audit record holds before and after).
    const text = (i: number, v: string) => `${v}${i} `.padEnd(DESCRIPTION_CHARS, 'abcdefghij ')
    let next = 0
    const ids: string[] = []
    const writer = async () => {
      while (next < USE_CASES) {
        const i = next++
        const res = await call('/use_cases', {
          method: 'POST',
          body: JSON.stringify({ name: `Large ${i}`, description: text(i, 'a') }),
        })
        expect(res.status).toBe(201)
        ids[i] = ((await res.json()) as { id: string }).id
      }
    }
    await Promise.all(Array.from({ length: 6 }, writer))
    next = 0
    const updater = async () => {
      while (next < USE_CASES) {
        const i = next++
        const res = await call(`/use_cases/${ids[i]}`, {
          method: 'PATCH',
          body: JSON.stringify({ description: text(i, 'b') }),
        })
        expect(res.status).toBe(200)
        await res.arrayBuffer()
      }
    }
    await Promise.all(Array.from({ length: 6 }, updater))

    const [stuckToken, slowToken, resumingToken, fastToken] = [
      await readToken(),
      await readToken(),
      await readToken(),
      await readToken(),
    ]
    const expected = await auditIdsAfter(db.env, early)
    const last = expected.at(-1)!
    expect(expected.length).toBeGreaterThanOrEqual(2 * USE_CASES)

    const started = Date.now()
    const before = { peak: rssMiB(service.child.pid!), now: rssMiB(service.child.pid!, 'VmRSS') }
    const exited = new Promise<string>((resolve) =>
      service.child.once('exit', (code, signal) =>
        resolve(`service exited (${code ?? signal}): ${service.output().slice(-2000)}`),
      ),
    )
    // A reader that stops reading (from the start: the kernel grows a socket's receive buffer, here up to 32 MiB, only
    // for a reader that keeps up), is cut off, and resumes with Last-Event-ID. First in line for the streams' budget.
    const resuming = rawStream(service.port, resumingToken, early)
    await sleep(200)
    // Streams that never read, and streams that read a little now and then (8 KiB every 250 ms).
    const stuck = Array.from({ length: STREAMS_PER_KEY }, () => rawStream(service.port, stuckToken, early))
    const slow = Array.from({ length: 3 }, () => rawStream(service.port, slowToken, early))
    const slowReads = setInterval(() => {
      for (const s of slow) {
        const chunk = s.socket.read(Math.min(8192, s.socket.readableLength)) as Buffer | null
        if (chunk) s.bytes += chunk.length
      }
    }, 250)

    // Meanwhile the service answers everyone else.
    let probing = true
    let probes = 0
    const probeFailures: string[] = []
    const prober = (async () => {
      while (probing) {
        try {
          const [live, list] = await Promise.all([
            fetch(`${service.baseUrl}/livez`),
            call('/use_cases?page_limit=1', {}, slowToken),
          ])
          await list.arrayBuffer()
          if (live.status !== 200 || list.status !== 200) probeFailures.push(`${live.status} ${list.status}`)
        } catch (err) {
          probeFailures.push(String((err as Error).cause ?? err))
          if (service.child.exitCode !== null || service.child.signalCode !== null) return
        }
        probes++
        await sleep(100)
      }
    })()
    // And readers that keep up take all of the log.
    const fast = Array.from({ length: 2 }, async () => {
      const ids: string[] = []
      return { outcome: await readEvents(service.baseUrl, fastToken, early, last, ids), count: ids.length }
    })

    const readAll = async () => {
      await sleep(SLOW_CLIENT_MS + 2000)
      // What the cut-off reader finds once it reads: the complete events the service sent before it closed the stream.
      let text = ''
      resuming.socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
      resuming.socket.resume()
      await within(resuming.closed, 5000)
      const received = [...text.matchAll(/^id: (al_[0-9a-z]{26})\nevent: [^\n]*\ndata: [^\n]*\n\n/gm)].map((m) => m[1])
      const firstConnection = received.length
      const outcomes: string[] = []
      while (received.at(-1) !== last && outcomes.length < 20 && outcomes.at(-1) !== 'complete') {
        outcomes.push(await readEvents(service.baseUrl, resumingToken, received.at(-1) ?? early, last, received))
      }
      return { firstConnection, received, outcomes }
    }
    const resumed = await Promise.race([readAll(), exited])
    if (typeof resumed === 'string') throw new Error(resumed)
    expect(resumed.firstConnection).toBeLessThan(expected.length)
    expect(resumed.outcomes.at(-1)).toBe('complete')
    expect(resumed.received).toEqual(expected)
    for (const reader of await Promise.all(fast))
      expect(reader).toEqual({ outcome: 'complete', count: expected.length })

    // The streams that never read were cut: all of their key's slots are free again.
    await sleep(SLOW_CLIENT_MS)
    const again = await Promise.all(
      stuck.map(() =>
        fetch(`${service.baseUrl}${PREFIX}/events`, { headers: { authorization: `Bearer ${stuckToken}` } }),
      ),
    )
    expect(again.map((res) => res.status)).toEqual(stuck.map(() => 200))
    for (const res of again) await res.body!.cancel()
    clearInterval(slowReads)
    probing = false
    await prober
    expect(probeFailures).toEqual([])
    expect(probes).toBeGreaterThan(5)
    // And what a stuck client finds once it reads at last is a stream the service ended, well short of the log.
    for (const s of [...stuck, ...slow]) {
      s.socket.on('data', (chunk: Buffer) => (s.bytes += chunk.length))
      s.socket.resume()
    }
    await Promise.race([Promise.all([...stuck, ...slow].map((s) => s.closed)), sleep(5000)])
    for (const s of [...stuck, ...slow]) {
      expect(s.socket.destroyed || s.socket.readableEnded).toBe(true)
      expect(s.bytes).toBeLessThan(20 * 1024 * 1024)
    }

    expect(service.child.exitCode).toBeNull()
    const rss = rssMiB(service.child.pid!)
    console.log(
      `events at the heap cap [${dialect}]: peak RSS ${rss.toFixed(0)} MiB (before the streams: ${before.now.toFixed(0)} MiB, peak ${before.peak.toFixed(0)} MiB), ${expected.length} events, ${resumed.firstConnection} events before the cut and ${resumed.outcomes.length} more connections for the resuming reader, ${probes} probes, ${Date.now() - started} ms of streams`,
    )
    expect(rss).toBeLessThan(PEAK_RSS_BOUND_MIB)
  }, 120_000)
})
