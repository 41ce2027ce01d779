import { Worker } from 'node:worker_threads'
import { threadEntry } from '../../shared/thread-entry.js'
import type { ResolvedAddress } from './webhook-dns.js'

/** What one POST came to: the receiver's status and Retry-After, or why there was no answer. */
export interface Exchange {
  status?: number
  retryAfter?: string
  error?: string
}

/**
 * A send's request and its answer, as they cross between the threads: `[id, url, headers, body, secrets,
 * addresses]`, `[id, exchange]`. The thread (webhook-sender-thread.ts) signs the request with each of `secrets` and connects to `addresses`.
 */
export type Send = [
  id: number,
  url: string,
  headers: Record<string, string>,
  body: string,
  secrets: string[],
  addresses: ResolvedAddress[],
]
export type Answer = [id: number, exchange: Exchange]
/** What the service tells the thread: sends to make, or to stop. */
export type ToThread = { sends: Send[] } | { stop: true }

/** With no send for this long, the thread ends (its memory and kept connections with it); the next send starts one. */
const IDLE_MS = 30_000

/**
 * Webhook POSTs, sent from a thread of their own: an HTTP exchange costs the thread that makes it about as much as
 * the create that caused the event, so sending on the API's thread would take that from the API. The dispatcher still decides what to send and records every outcome; only the exchange and
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
    worker.postMessage({ stop: true } satisfies ToThread)
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
    thread.postMessage({ sends } satisfies ToThread)
  }

  private thread(): Worker {
    if (this.worker) return this.worker
    // No heap cap of its own: it holds the bodies of the sends in flight (at most the dispatcher's CONCURRENCY), and
    // a cap that a few large records could reach would end every send in flight, again on every retry.
    const worker = new Worker(threadEntry('webhook-sender-thread', import.meta.url), {
      workerData: { timeoutMs: this.options.timeoutMs },
    })
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
