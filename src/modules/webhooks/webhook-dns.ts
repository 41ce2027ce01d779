import { Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'
import { LRUCache } from 'lru-cache'
import { Counts } from '../../shared/counts.js'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Why a name has no address: `code` as node:dns gives it (ENOTFOUND, ENODATA, ETIMEOUT, …), or EBUSY. */
export class DnsError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** Queries of one tenant in flight at once: a tenant whose names never answer holds these and no more. */
export const LOOKUPS_PER_TENANT = 8
/** Lookups of one tenant waiting for one of its slots; past this, one fails at once instead of waiting. */
const WAITING_PER_TENANT = 256
/** Names (answers and failures) kept at most. */
const CACHE_ENTRIES = 10_000
/** An answer is kept for its TTL, at most this long, so that a moved receiver is found again soon. */
const MAX_TTL_S = 300
/** A name without an answer (no such name, no address, no answer in time) is asked again after this long. */
const NEGATIVE_TTL_MS = 10_000
/** `localhost` and `*.localhost` are loopback by definition (RFC 6761 §6.3), never asked of a DNS server. */
const LOOPBACK: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
]

type Answer = { addresses: ResolvedAddress[] } | { error: DnsError }
/** One family's query: its records, the error's code, or undefined while unanswered. */
type Result = { records: { address: string; ttl: number }[] } | { code: string } | undefined

/**
 * Name lookups of webhook targets, at save and at send. node:dns `lookup` runs getaddrinfo on libuv's small thread
 * pool, which file access, crypto and zlib share: a tenant whose names never answer would hold it and stall every
 * tenant. This asks DNS servers with c-ares (node:dns `Resolver`) on the event loop instead, with its own timeout,
 * at most LOOKUPS_PER_TENANT queries in flight per tenant, and the answers cached for their TTL (failures briefly).
 * It does not read /etc/hosts: only IP literals and localhost are answered without a server.
 */
export class WebhookResolver {
  private readonly resolver: Resolver
  private readonly timeoutMs: number
  private readonly cache = new LRUCache<string, Answer>({ max: CACHE_ENTRIES })
  /** Queries in flight by tenant and name: concurrent sends to one name share one. */
  private readonly inFlight = new Map<string, Promise<ResolvedAddress[]>>()
  private readonly active = new Counts()
  private readonly waiting = new Map<string, (() => void)[]>()

  constructor(options: { servers?: string[]; timeoutMs: number }) {
    this.timeoutMs = options.timeoutMs
    // c-ares doubles the timeout on its second try: a third, then two thirds of timeoutMs (and each query is cut at it).
    this.resolver = new Resolver({ timeout: Math.max(1, Math.floor(options.timeoutMs / 3)), tries: 2 })
    if (options.servers && options.servers.length > 0) this.resolver.setServers(options.servers)
  }

  /** `host`'s addresses (IPv4 first), from the cache or asked for `tenantId`; rejects with a DnsError. */
  async resolve(tenantId: string, host: string): Promise<ResolvedAddress[]> {
    const bare = host.replace(/^\[|\]$/g, '')
    const family = isIP(bare)
    if (family !== 0) return [{ address: bare, family: family as 4 | 6 }]
    const name = bare.toLowerCase().replace(/\.$/, '')
    if (name === 'localhost' || name.endsWith('.localhost')) return LOOPBACK
    const cached = this.cache.get(name)
    if (cached) {
      if ('error' in cached) throw cached.error
      return cached.addresses
    }
    const key = `${tenantId}\n${name}`
    let pending = this.inFlight.get(key)
    if (!pending) {
      pending = this.query(tenantId, name).finally(() => this.inFlight.delete(key))
      this.inFlight.set(key, pending)
    }
    return pending
  }

  private async query(tenantId: string, name: string): Promise<ResolvedAddress[]> {
    const deadline = Date.now() + this.timeoutMs
    const release = await this.slot(tenantId, name, deadline)
    // A slot that freed too late leaves a query too little time to be worth asking (and caching its failure).
    if (deadline - Date.now() < this.timeoutMs / 4) {
      release()
      throw this.busy(name)
    }
    const results: Result[] = [undefined, undefined]
    const both = Promise.all(
      [this.resolver.resolve4(name, { ttl: true }), this.resolver.resolve6(name, { ttl: true })].map((query, i) =>
        query.then(
          (records) => void (results[i] = { records }),
          (err: NodeJS.ErrnoException) => void (results[i] = { code: err.code ?? 'ESERVFAIL' }),
        ),
      ),
    )
    // The slot is held until c-ares ends the query, so a tenant never has more than its share outstanding.
    void both.finally(release)
    let timer: NodeJS.Timeout | undefined
    const cut = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))
    await Promise.race([both, cut])
    clearTimeout(timer)
    const answer = this.answer(name, results)
    if ('error' in answer) {
      this.cache.set(name, answer, { ttl: NEGATIVE_TTL_MS })
      throw answer.error
    }
    const ttlS = Math.min(
      MAX_TTL_S,
      ...results.flatMap((r) => (r && 'records' in r ? r.records.map((record) => record.ttl) : [])),
    )
    if (ttlS > 0) this.cache.set(name, answer, { ttl: ttlS * 1000 })
    return answer.addresses
  }

  /** The addresses of what answered (one family answering in time is enough), else why there are none. */
  private answer(name: string, [v4, v6]: Result[]): Answer {
    const addresses: ResolvedAddress[] = [
      ...(v4 && 'records' in v4 ? v4.records.map((r) => ({ address: r.address, family: 4 as const })) : []),
      ...(v6 && 'records' in v6 ? v6.records.map((r) => ({ address: r.address, family: 6 as const })) : []),
    ]
    if (addresses.length > 0) return { addresses }
    const codes = [v4, v6].map((r) => (r === undefined ? 'ETIMEOUT' : 'code' in r ? r.code : 'ENODATA'))
    if (codes.includes('ETIMEOUT')) return { error: this.timedOut(name) }
    if (codes.every((code) => code === 'ENOTFOUND' || code === 'ENODATA'))
      return { error: new DnsError('ENOTFOUND', `${name} has no address in DNS`) }
    const code = codes.find((c) => c !== 'ENOTFOUND' && c !== 'ENODATA')!
    return { error: new DnsError(code, `DNS lookup of ${name} failed (${code})`) }
  }

  private timedOut(name: string): DnsError {
    return new DnsError('ETIMEOUT', `no DNS answer for ${name} within ${this.timeoutMs / 1000} s`)
  }

  /** One of the tenant's query slots, once free; rejects when none frees before `deadline` or too many wait. */
  private slot(tenantId: string, name: string, deadline: number): Promise<() => void> {
    const release = () => {
      this.active.add(tenantId, -1)
      this.waiting.get(tenantId)?.shift()?.()
    }
    if (this.active.of(tenantId) < LOOKUPS_PER_TENANT) {
      this.active.add(tenantId, 1)
      return Promise.resolve(release)
    }
    const queue = this.waiting.get(tenantId) ?? []
    if (queue.length >= WAITING_PER_TENANT) return Promise.reject(this.busy(name))
    this.waiting.set(tenantId, queue)
    return new Promise((resolve, reject) => {
      const start = () => {
        clearTimeout(timer)
        if (queue.length === 0) this.waiting.delete(tenantId)
        this.active.add(tenantId, 1)
        resolve(release)
      }
      const timer = setTimeout(
        () => {
          queue.splice(queue.indexOf(start), 1)
          if (queue.length === 0) this.waiting.delete(tenantId)
          reject(this.busy(name))
        },
        Math.max(0, deadline - Date.now()),
      )
      queue.push(start)
    })
  }

  private busy(name: string): DnsError {
    return new DnsError(
      'EBUSY',
      `no DNS answer for ${name} within ${this.timeoutMs / 1000} s: this tenant's other lookups took every slot`,
    )
  }
}
