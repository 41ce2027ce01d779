import { sql } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Database } from '../db/create-db.js'

/** The families kept rendered: each of their audit records names the one record of theirs it changed. */
const ITEM_TYPES = new Set(['use_case', 'model', 'vendor'])
/** More changes than this between two heads: forgetting the tenant's items costs less than reading them all. */
const DELTA_LIMIT = 200
/** Changes made in the database behind the service's back show within this long. */
const ITEM_TTL_MS = 10 * 60_000
/** Tenants whose chain position is remembered; one forgotten starts again with no items. */
const MAX_TENANTS = 10_000

/** How far a tenant's kept items are known to be current: up to chain position `seq`, in generation `epoch`. */
interface TenantState {
  seq: number
  epoch: number
}

/** What one request may read and file: the tenant's state when it looked. */
export interface ItemView {
  tenantId: string
  state: TenantState
  seq: number
  epoch: number
}

interface Entry {
  json: string
  updatedAt: string
  epoch: number
}

/**
 * Governed records' JSON as the database rendered it, kept across the tenant's writes. The read cache forgets a
 * tenant's answers whenever its audit chain moves, and a list page of 50 costs its rendering again (most of an
 * uncached list), although a write changes one record. Every change is audited in its transaction, so the audit
 * records between the chain position the items are current at and the head name what changed: a use case, model
 * or vendor record's own changes forget that record; anything else (a user or team renamed, a custom field
 * redefined, an attachment) or a long gap forgets the tenant's items (a new epoch). Reads take the state when they
 * start and file what they render only while the state is unchanged, so nothing rendered before a change is
 * filed after it was accounted for. Works across instances: the audit log they read is shared.
 */
export class ItemCache {
  private readonly items: LRUCache<string, Entry>
  private readonly tenants = new LRUCache<string, TenantState>({ max: MAX_TENANTS })
  /** Epochs are never reused, so a tenant forgotten and met again cannot see items of its earlier life. */
  private epochs = 0
  private readonly headQuery
  private readonly deltaQuery

  constructor(
    private readonly database: Database,
    maxBytes: number,
  ) {
    this.items = new LRUCache<string, Entry>({ maxSize: maxBytes, ttl: ITEM_TTL_MS, sizeCalculation: (e) => e.json.length + e.updatedAt.length + 64 })
    const { db } = database
    this.headQuery = db.selectFrom('tenants').select('audit_seq').where('id', '=', '').compile()
    this.deltaQuery = database.prepared(
      db
        .selectFrom('audit_logs')
        .select(['resource_type', 'resource_id'])
        .where('tenant_id', '=', '')
        .where('seq', '>', 0)
        .where('seq', '<=', 0)
        .orderBy('seq')
        .limit(sql.lit(DELTA_LIMIT + 1))
        .compile(),
    )
  }

  /** The tenant's view as of its chain head (`seq` when the caller has just read it), once what changed is forgotten. */
  async view(tenantId: string, seq?: number): Promise<ItemView> {
    const head = seq ?? (await this.head(tenantId))
    let state = this.tenants.get(tenantId)
    if (!state) {
      state = { seq: head, epoch: ++this.epochs }
      this.tenants.set(tenantId, state)
    } else if (state.seq < head) {
      const from = state.seq
      const { rows } = await this.database.db.executeQuery<{ resource_type: string; resource_id: string | null }>({ ...this.deltaQuery, parameters: [tenantId, from, head] })
      // Another request may have moved the state on meanwhile; the changes read still cover the rest of the way.
      if (state.seq < head) {
        if (rows.length > DELTA_LIMIT || rows.some((r) => !ITEM_TYPES.has(r.resource_type) || r.resource_id === null)) state.epoch = ++this.epochs
        else for (const r of rows) this.items.delete(itemKey(tenantId, r.resource_type, r.resource_id!))
        state.seq = head
      }
    }
    return { tenantId, state, seq: state.seq, epoch: state.epoch }
  }

  /** The record's JSON if kept and current in this view; for a list row, only if rendered from that very version. */
  get(view: ItemView, type: string, id: string, updatedAt?: string): string | undefined {
    const entry = this.items.get(itemKey(view.tenantId, type, id))
    if (!entry || entry.epoch !== view.epoch || (updatedAt !== undefined && entry.updatedAt !== updatedAt)) return undefined
    return entry.json
  }

  /** Files a rendering made after the view was taken, unless the tenant's state has moved since. */
  put(view: ItemView, type: string, id: string, updatedAt: string, json: string): void {
    const { state } = view
    if (this.tenants.peek(view.tenantId) !== state || state.seq !== view.seq || state.epoch !== view.epoch) return
    this.items.set(itemKey(view.tenantId, type, id), { json, updatedAt, epoch: view.epoch })
  }

  private async head(tenantId: string): Promise<number> {
    const query = { ...this.headQuery, parameters: [tenantId] }
    const rows = this.database.readNow<{ audit_seq: number }>(query) ?? (await this.database.db.executeQuery<{ audit_seq: number }>(query)).rows
    return rows[0]?.audit_seq ?? 0
  }
}

const itemKey = (tenantId: string, type: string, id: string) => `${tenantId} ${type} ${id}`
