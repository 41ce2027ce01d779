/**
 * The read model: what the service keeps of its own answers and records so that reads skip work, and the rules that
 * keep each of them exact (docs/architecture.md, "The read model"). Code outside this folder imports from here only.
 *
 * - `answers`: rendered GET answers by tenant and URL, current while the tenant's audit chain head stays put; the
 *   HTTP face is installReadCache (ETags, 304, and the chain position a missed read starts from).
 * - `records`: governed records' JSON and list pages, kept across writes and moved on by the audit records between
 *   two heads (ItemCache); a catalog declares which of its fields no list reads (`unlisted`).
 * - kept reads: a group transaction's reads of a tenant's definitions (keptRead), forgotten by any write to their
 *   table through that transaction (KeptReads, a plugin on it) and by a member's rollback.
 */
import { LRUCache } from 'lru-cache'
import type { Database } from '../db/create-db.js'
import { ItemCache } from './item-cache.js'
import type { AnswerCache, CachedAnswer } from './read-cache.js'

export type { ItemCache, ItemView, PageBody, PageIds, RenderedRow } from './item-cache.js'
export { KeptReads, keptRead } from './kept-reads.js'
export { type AnswerCache, installReadCache, type ReadCacheOutcome } from './read-cache.js'

export interface ReadModel {
  /** Rendered GET answers (null with SERVICE_READ_CACHE_MB=0: every GET is rendered, ETags still answer 304). */
  readonly answers: AnswerCache | null
  /** Governed records' JSON kept across writes (null with SERVICE_RECORD_CACHE_MB=0). */
  readonly records: ItemCache | null
}

/** The service's read model, built once in the dependency wiring; sizes in bytes, 0 turns a layer off. */
export function createReadModel(database: Database, sizes: { answerBytes: number; recordBytes: number }): ReadModel {
  return {
    answers:
      sizes.answerBytes > 0
        ? new LRUCache<string, CachedAnswer>({
            maxSize: sizes.answerBytes,
            sizeCalculation: (a) => a.body.length + a.etag.length,
          })
        : null,
    records: sizes.recordBytes > 0 ? new ItemCache(database, sizes.recordBytes) : null,
  }
}
