import { Counts } from '../../shared/counts.js'

interface Waiter {
  tenantId: string
  bytes: number
  grant(): void
}

/**
 * The bytes of audit records all event streams of this instance may hold at once (read, rendered, not yet taken by
 * their clients), and the share of them one tenant may hold. A stream takes its batch's bytes before it reads the
 * batch and gives them back once its client has taken it (or it is closed), so a stream past the budget waits
 * instead of growing the heap. First come, first served, except that a tenant at its share does not hold up others.
 */
export class StreamBudget {
  private used = 0
  private readonly byTenant = new Counts()
  private readonly queue: Waiter[] = []

  constructor(
    readonly totalBytes: number,
    readonly tenantBytes: number,
  ) {}

  /**
   * Resolves with the function that gives `bytes` back once they fit (a batch larger than a tenant's share counts as
   * that share, so it is read alone); rejects when `signal` aborts first.
   */
  async take(tenantId: string, bytes: number, signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted()
    const amount = Math.min(bytes, this.tenantBytes)
    const waiter: Waiter = { tenantId, bytes: amount, grant: () => undefined }
    const granted = new Promise<void>((resolve, reject) => {
      const abort = () => {
        this.queue.splice(this.queue.indexOf(waiter), 1)
        reject(signal.reason)
      }
      waiter.grant = () => {
        signal.removeEventListener('abort', abort)
        resolve()
      }
      signal.addEventListener('abort', abort, { once: true })
    })
    this.queue.push(waiter)
    this.admit()
    await granted
    let given = false
    return () => {
      if (given) return
      given = true
      this.used -= amount
      this.byTenant.add(tenantId, -amount)
      this.admit()
    }
  }

  /** Bytes held now, all tenants together. */
  get held(): number {
    return this.used
  }

  private admit(): void {
    for (let i = 0; i < this.queue.length; ) {
      const w = this.queue[i]
      if (this.byTenant.of(w.tenantId) + w.bytes > this.tenantBytes) {
        i++ // its tenant's share is full: let the others past
        continue
      }
      if (this.used + w.bytes > this.totalBytes) return
      this.queue.splice(i, 1)
      this.used += w.bytes
      this.byTenant.add(w.tenantId, w.bytes)
      w.grant()
    }
  }
}
