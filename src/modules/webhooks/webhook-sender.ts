import { Worker } from 'node:worker_threads'
import type { ResolvedAddress } from './webhook-dns.js'

/** What one POST came to: the receiver's status and Retry-After, or why there was no answer. */
export interface Exchange {
  status?: number
  retryAfter?: string
  error?: string
}

/**
 * A send's request and its answer, as they cross between the threads: `[id, url, headers, body, secrets,
 * addresses]`, `[id, exchange]`. The thread signs the request with each of `secrets` and connects to `addresses`.
 */
type Send = [
  id: number,
  url: string,
  headers: Record<string, string>,
  body: string,
  secrets: string[],
  addresses: ResolvedAddress[],
]
type Answer = [id: number, exchange: Exchange]

/** With no send for this long, the thread ends (its memory and kept connections with it); the next send starts one. */
const IDLE_MS = 30_000

// The thread's code, given as text so that it runs the same from the build and from the sources (tests), as the
// SQLite checkpointer's. It holds the connections (kept alive, redirects never followed: http.request does not
// follow them), times each exchange out and drains the answer. It never looks a name up: a new connection goes to
// the addresses the service resolved and checked for this send (pinned, so a DNS answer changing between the check
// and the connection cannot reach another address); a kept one was checked when it was opened.
// Answers go back in one message per turn of its loop.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads')
const { createHmac } = require('node:crypto')
const http = require('node:http')
const https = require('node:https')
// No lookup of their own: an agent's options override the request's, and each request brings its pinned one.
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) }
const pinned = (addresses) => (hostname, options, callback) => {
  const usable = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses
  if (usable.length === 0) return callback(Object.assign(new Error('no checked address of ' + hostname + ' to connect to'), { code: 'ENOTFOUND' }))
  if (options.all) callback(null, usable)
  else callback(null, usable[0].address, usable[0].family)
}
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
const send = ([id, url, headers, body, secrets, addresses]) => {
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
  const req = client.request(target, { method: 'POST', headers, agent: agents[target.protocol], lookup: pinned(addresses) }, (res) => {
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
  else if (message.stop) {
    for (const req of requests) req.destroy()
    agents['http:'].destroy()
    agents['https:'].destroy()
    parentPort.close()
  }
})
`

/**
 * Webhook POSTs, sent from a thread of their own: an HTTP exchange costs the thread that makes it about as much as
 * the create that caused the event, so sending on the API's thread would take that from the API (the measurements
 * are in bench/results/design-measurements.md). The dispatcher still decides what to send and records every outcome; only the exchange and
 * its signature move here.
 */
export class WebhookSender {
  private worker: Worker | undefined
  /** Sends not answered yet, with the thread they went to (none while in the outbox). */
  private readonly pending = new Map<number, { resolve: (exchange: Exchange) => void; thread?: Worker }>()
  private nextId = 0
  private outbox: Send[] = []
  private idle: NodeJS.Timeout | undefined
  private stopped = false

  constructor(private readonly options: { timeoutMs: number; idleMs?: number }) {}

  /**
   * POSTs `body` to `url`, signed with each of `secrets` as its `webhook-id` and `webhook-timestamp` headers name
   * it, connecting to `addresses` (the checked addresses of its host); resolves with the exchange, never rejects.
   */
  send(
    url: string,
    headers: Record<string, string>,
    body: string,
    secrets: string[],
    addresses: ResolvedAddress[],
  ): Promise<Exchange> {
    if (this.stopped) return Promise.resolve({ error: 'the service is stopping' })
    const id = this.nextId++
    // Sends asked for in one turn of the loop cross to the thread in one message.
    if (this.outbox.push([id, url, headers, body, secrets, addresses]) === 1) setImmediate(() => this.flush())
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
    worker.on('message', (message: { answers?: Answer[] }) => {
      if (message.answers) this.answered(message.answers)
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
}
