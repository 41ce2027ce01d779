import type { LookupFunction } from 'node:net'
import { Worker } from 'node:worker_threads'

/** What one POST came to: the receiver's status and Retry-After, or why there was no answer. */
export interface Exchange {
  status?: number
  retryAfter?: string
  error?: string
}

/**
 * A send's request and its answer, as they cross between the threads: `[id, url, headers, body, secrets]`,
 * `[id, exchange]`. The thread signs the request with each of `secrets`.
 */
type Send = [id: number, url: string, headers: Record<string, string>, body: string, secrets: string[]]
type Answer = [id: number, exchange: Exchange]
/** A lookup the thread asks for, `[id, hostname, options]`, and its result, `[id, error, address(es), family]`. */
type LookupAsk = [id: number, hostname: string, options: object]
type LookupAnswer = [id: number, error: { message: string; code?: string } | null, ...result: unknown[]]

/** With no send for this long, the thread ends (its memory and kept connections with it); the next send starts one. */
const IDLE_MS = 30_000

// The thread's code, given as text so that it runs the same from the build and from the sources (tests), as the
// SQLite checkpointer's. It holds the connections (kept alive, redirects never followed: http.request does not
// follow them), times each exchange out, drains the answer, and asks the service's thread to resolve every host it
// connects to, so that the check of the address actually connected to stays in one place (guardedLookup).
// Answers and lookups go back in one message per turn of its loop.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads')
const { createHmac } = require('node:crypto')
const http = require('node:http')
const https = require('node:https')
const lookups = new Map()
let nextLookup = 0
const lookup = (hostname, options, callback) => {
  lookups.set(nextLookup, callback)
  parentPort.postMessage({ lookup: [nextLookup++, hostname, { ...options }] })
}
const agents = { 'http:': new http.Agent({ keepAlive: true, lookup }), 'https:': new https.Agent({ keepAlive: true, lookup }) }
const requests = new Set()
let answers = []
const answer = (id, exchange) => {
  if (answers.push([id, exchange]) === 1) setImmediate(() => parentPort.postMessage({ answers: answers.splice(0) }))
}
const describe = (err) => (err.code && err.code !== 'EBLOCKEDTARGET' ? err.code + ': ' + err.message : err.message)
// The Standard Webhooks signature of the request, one per secret: v1,<base64 HMAC-SHA256 of "id.timestamp.body">.
const sign = (headers, body, secrets) => {
  const message = headers['webhook-id'] + '.' + headers['webhook-timestamp'] + '.' + body
  return secrets.map((secret) => 'v1,' + createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(message).digest('base64')).join(' ')
}
const send = ([id, url, headers, body, secrets]) => {
  if (secrets.length > 0) headers['webhook-signature'] = sign(headers, body, secrets)
  const target = new URL(url)
  let timedOut = false
  const done = (exchange) => {
    clearTimeout(timer)
    requests.delete(req)
    answer(id, exchange)
  }
  const failure = (err) => (timedOut ? 'no answer within ' + workerData.timeoutMs / 1000 + ' s' : describe(err))
  const client = target.protocol === 'https:' ? https : http
  const req = client.request(target, { method: 'POST', headers, agent: agents[target.protocol] }, (res) => {
    res.resume()
    res.on('end', () => done({ status: res.statusCode, retryAfter: res.headers['retry-after'] }))
    res.on('error', (err) => done({ status: res.statusCode, error: failure(err) }))
  })
  const timer = setTimeout(() => {
    timedOut = true
    req.destroy()
  }, workerData.timeoutMs)
  requests.add(req)
  req.on('error', (err) => done({ error: failure(err) }))
  req.end(body)
}
parentPort.on('message', (message) => {
  if (message.sends) for (const s of message.sends) send(s)
  else if (message.looked) {
    const [id, error, ...result] = message.looked
    const callback = lookups.get(id)
    lookups.delete(id)
    callback(error && Object.assign(new Error(error.message), { code: error.code }), ...result)
  } else if (message.stop) {
    for (const req of requests) req.destroy()
    agents['http:'].destroy()
    agents['https:'].destroy()
    parentPort.close()
  }
})
`

/**
 * Webhook POSTs, sent from a thread of their own. An HTTP exchange costs the thread that makes it about as much as
 * the create that caused the event (its request, the answer's parsing, the socket's events): sent from the API's
 * thread, a `*` subscriber cost creates 7–36 % of their throughput (median 17 % over six runs of npm run bench,
 * SQLite), sent from this one 3–16 % (median 11 % over fourteen runs, the same day). The thread costs about 20 MB
 * of memory while it runs. The dispatcher still decides what to send and records every outcome; only the exchange
 * and its signature move here.
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

  /**
   * POSTs `body` to `url`, signed with each of `secrets` as its `webhook-id` and `webhook-timestamp` headers name
   * it; resolves with the exchange, never rejects.
   */
  send(url: string, headers: Record<string, string>, body: string, secrets: string[] = []): Promise<Exchange> {
    if (this.stopped) return Promise.resolve({ error: 'the service is stopping' })
    const id = this.nextId++
    // Sends asked for in one turn of the loop cross to the thread in one message.
    if (this.outbox.push([id, url, headers, body, secrets]) === 1) setImmediate(() => this.flush())
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
    const worker = new Worker(THREAD, { eval: true, workerData: { timeoutMs: this.options.timeoutMs } })
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
