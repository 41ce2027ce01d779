import { createRequire } from 'node:module'
import type { LookupFunction } from 'node:net'
import { Worker } from 'node:worker_threads'

/** What one POST came to: the receiver's status and Retry-After, or why there was no answer. */
export interface Exchange {
  status?: number
  retryAfter?: string
  error?: string
}

/** A send's request and its answer, as they cross between the threads: `[id, url, headers, body]`, `[id, exchange]`. */
type Send = [id: number, url: string, headers: Record<string, string>, body: string]
type Answer = [id: number, exchange: Exchange]
/** A lookup the thread asks for, `[id, hostname, options]`, and its result, `[id, error, address(es), family]`. */
type LookupAsk = [id: number, hostname: string, options: object]
type LookupAnswer = [id: number, error: { message: string; code?: string } | null, ...result: unknown[]]

/** Where the thread loads undici from (its code is evaluated text, which resolves no package of ours by itself). */
const UNDICI = createRequire(import.meta.url).resolve('undici')

/** With no send for this long, the thread ends (its memory and kept connections with it); the next send starts one. */
const IDLE_MS = 30_000

// The thread's code, given as text so that it runs the same from the build and from the sources (tests), as the
// SQLite checkpointer's. It holds the connections (kept alive; redirects are never followed: undici's request does
// not follow them), times each exchange out, drains the answer, and asks the service's thread to resolve every host
// it connects to, so that the check of the address actually connected to stays in one place (guardedLookup).
// Answers and lookups go back in one message per turn of its loop. undici, not node:http: an exchange cost the
// thread about a third less CPU in a local comparison (93–128 µs against 144–176), on the 2 cores it shares with
// the API.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads')
const { Agent } = require(workerData.undici)
const lookups = new Map()
let nextLookup = 0
const lookup = (hostname, options, callback) => {
  lookups.set(nextLookup, callback)
  parentPort.postMessage({ lookup: [nextLookup++, hostname, { ...options }] })
}
const agent = new Agent({ connect: { lookup } })
let answers = []
let stopping = false
const answer = (id, exchange) => {
  // Sends cut short by a stop are answered by the service's thread, as ended with the thread.
  if (stopping) return
  if (answers.push([id, exchange]) === 1) setImmediate(() => parentPort.postMessage({ answers: answers.splice(0) }))
}
const describe = (err) => (err.code && err.code !== 'EBLOCKEDTARGET' ? err.code + ': ' + err.message : err.message)
const send = async ([id, url, headers, body]) => {
  const target = new URL(url)
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), workerData.timeoutMs)
  const failure = (err) => (deadline.signal.aborted ? 'no answer within ' + workerData.timeoutMs / 1000 + ' s' : describe(err.cause ?? err))
  let status
  try {
    const res = await agent.request({ origin: target.origin, path: target.pathname + target.search, method: 'POST', headers, body, signal: deadline.signal })
    status = res.statusCode
    const retryAfter = [res.headers['retry-after']].flat()[0]
    await res.body.dump({ signal: deadline.signal })
    answer(id, { status, retryAfter })
  } catch (err) {
    answer(id, status === undefined ? { error: failure(err) } : { status, error: failure(err) })
  } finally {
    clearTimeout(timer)
  }
}
parentPort.on('message', (message) => {
  if (message.sends) for (const s of message.sends) void send(s)
  else if (message.looked) {
    const [id, error, ...result] = message.looked
    const callback = lookups.get(id)
    lookups.delete(id)
    callback(error && Object.assign(new Error(error.message), { code: error.code }), ...result)
  } else if (message.stop) {
    stopping = true
    void agent.destroy().finally(() => parentPort.close())
  }
})
`

/**
 * Webhook POSTs, sent from a thread of their own. An HTTP exchange costs the thread that makes it about as much as
 * the create that caused the event (its request, the answer's parsing, the socket's events): sent from the API's
 * thread, a `*` subscriber cost creates 7–36 % of their throughput (median 17 % over six runs of npm run bench,
 * SQLite), sent from this one 3–16 % (median 11 % over fourteen runs, the same day). The thread costs about 20 MB
 * of memory while it runs. The dispatcher still decides what to send and records every outcome; only the exchange
 * moves here.
 */
export class WebhookSender {
  private worker: Worker | undefined
  /** Sends not answered yet, with the thread they went to (none while in the outbox). */
  private readonly pending = new Map<number, { resolve: (exchange: Exchange) => void; thread?: Worker }>()
  private nextId = 0
  private outbox: Send[] = []
  private idle: NodeJS.Timeout | undefined
  private stopped = false

  constructor(
    private readonly options: { timeoutMs: number; lookup: LookupFunction; idleMs?: number },
  ) {}

  /** POSTs `body` to `url`; resolves with the exchange, never rejects. */
  send(url: string, headers: Record<string, string>, body: string): Promise<Exchange> {
    if (this.stopped) return Promise.resolve({ error: 'the service is stopping' })
    const id = this.nextId++
    // Sends asked for in one turn of the loop cross to the thread in one message.
    if (this.outbox.push([id, url, headers, body]) === 1) setImmediate(() => this.flush())
    clearTimeout(this.idle)
    return new Promise((resolve) => this.pending.set(id, { resolve }))
  }

  /** Ends the thread for good: sends in flight end with an error (their deliveries are tried again), later ones at once. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.retire()
  }

  /** Ends the thread; a later send starts another. */
  private async retire(): Promise<void> {
    clearTimeout(this.idle)
    const worker = this.worker
    if (!worker) return
    // Sends asked for from now on start a thread of their own (flush() calls thread() again).
    this.worker = undefined
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.postMessage({ stop: true })
    await exited
  }

  private flush(): void {
    const sends = this.outbox.splice(0)
    if (this.stopped) {
      for (const [id] of sends) this.answered([[id, { error: 'the service is stopping' }]])
      return
    }
    const thread = this.thread()
    for (const [id] of sends) this.pending.get(id)!.thread = thread
    thread.postMessage({ sends })
  }

  private thread(): Worker {
    if (this.worker) return this.worker
    // No heap cap of its own: it holds the bodies of the sends in flight (at most the dispatcher's CONCURRENCY), and
    // a cap that a few large records could reach would end every send in flight, again on every retry.
    const worker = new Worker(THREAD, { eval: true, workerData: { timeoutMs: this.options.timeoutMs, undici: UNDICI } })
    worker.unref()
    worker.on('message', (message: { answers?: Answer[]; lookup?: LookupAsk }) => {
      if (message.answers) this.answered(message.answers)
      else if (message.lookup) this.lookup(worker, message.lookup)
    })
    worker.on('error', () => undefined)
    worker.once('exit', () => {
      if (this.worker === worker) this.worker = undefined
      for (const [id, send] of this.pending) {
        if (send.thread !== worker) continue
        this.pending.delete(id)
        send.resolve({ error: 'the sending thread ended before an answer came' })
      }
    })
    this.worker = worker
    return worker
  }

  private answered(answers: Answer[]): void {
    for (const [id, exchange] of answers) {
      this.pending.get(id)?.resolve(exchange)
      this.pending.delete(id)
    }
    if (this.pending.size === 0 && this.outbox.length === 0) {
      clearTimeout(this.idle)
      this.idle = setTimeout(() => void this.retire(), this.options.idleMs ?? IDLE_MS).unref()
    }
  }

  private lookup(worker: Worker, [id, hostname, options]: LookupAsk): void {
    const reply = (err: NodeJS.ErrnoException | null, ...result: unknown[]) => {
      const answer: LookupAnswer = [id, err && { message: err.message, code: err.code }, ...result]
      worker.postMessage({ looked: answer })
    }
    ;(this.options.lookup as (hostname: string, options: object, callback: typeof reply) => void)(hostname, options, reply)
  }
}
