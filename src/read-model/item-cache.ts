import { sql } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Database } from '../db/create-db.js'
import type { ItemText } from '../shared/item-json.js'

/** The families kept rendered: each of their audit records names the one record of theirs it changed. */
const ITEM_TYPES = new Set(['use_case', 'model', 'vendor'])
/** More changes than this between two heads: forgetting the tenant's items costs less than reading them all. */
const DELTA_LIMIT = 200
/** Changes made in the database behind the service's back show within this long. */
const ITEM_TTL_MS = 10 * 60_000
/** Tenants whose chain position is remembered; one forgotten starts again with no items. */
const MAX_TENANTS = 10_000
/**
 * Records a tenant's state remembers having forgotten (see TenantState.forgotten): more than a busy tenant's writes
 * change while a read is under way.
 */
const FORGOTTEN_KEPT = 32

/**
 * How far a tenant's kept items are known to be current: up to chain position `seq`, in generation `epoch`; its
 * kept list pages, in generation `lists`.
 */
interface TenantState {
  seq: number
  epoch: number
  lists: number
  /** The read of changes under way, and the head it reads up to: requests wanting no later head share it. */
  catchingUp?: { to: number; done: Promise<void> }
  /**
   * The records forgotten in this epoch, by id, with the chain position of the last change that forgot each;
   * complete for views taken at `forgottenFrom` or later (the oldest ones make room for new ones). A
   * record rendered for an older view is still current if it has not been forgotten since: a busy tenant's other
   * writes no longer throw away every rendering made while they committed.
   */
  forgotten: Map<string, number>
  forgottenFrom: number
}

/** What one request may read and file: the tenant's state when it looked. */
export interface ItemView {
  tenantId: string
  state: TenantState
  seq: number
  epoch: number
  lists: number
}

/** A list page's records in order, and its pagination: what the list query found. */
export interface PageIds {
  ids: string[]
  pagination: { has_more: boolean; next_cursor: string | null }
}

interface Entry {
  tenantId: string
  type: string
  text: ItemText
  updatedAt: string
  epoch: number
}

/** A page as it was last sent: its bytes, and the kept renderings of its records they were built from. */
export interface PageBody {
  texts: ItemText[]
  bytes: Buffer
}

interface PageEntry extends PageIds {
  lists: number
  body?: PageBody
}

/**
 * Governed records' JSON as the database rendered it, kept across the tenant's writes. The read cache forgets a
 * tenant's answers whenever its audit chain moves, and a list page of 50 costs its rendering again (most of an
 * uncached list), although a write changes one record. Every change is audited in its transaction, so the audit
 * records between the chain position the items are current at and the head name what changed: a use case, model
 * or vendor record's own changes forget that record; anything else (a user or team renamed, a custom field
 * redefined, an attachment) or a long gap forgets the tenant's items (a new epoch). Reads take the state when they
 * start and file what they render only if that record has not been forgotten since (nor everything), so nothing
 * rendered before a change is filed after it was accounted for. Works across instances: the audit log they read is
 * shared. This instance's own writes are accounted for as they commit, without reading them back.
 *
 * A list page's records (its ids in order) are kept too, so that a list after a write reads no list query: most
 * writes change what a record says, not which records a list holds or their order. An update whose audited
 * changes are all fields that no list filter, search or sort reads (a family's `unlisted` fields) keeps the
 * tenant's pages; any other change (a create, a delete, a rename, another family's change) forgets them all.
 */
export class ItemCache {
  /**
   * By record id alone (ids are generated, unique across tenants and families; an entry names its tenant and family,
   * checked on every get): a kept page's ids are the same strings on every request, whose hashes V8 keeps, where
   * a composed key was built and hashed anew for each of a page's 50 items.
   */
  private readonly items: LRUCache<string, Entry>
  private readonly pages: LRUCache<string, PageEntry>
  /** Per family, the fields whose changes keep list pages. */
  private readonly unlisted = new Map<string, ReadonlySet<string>>()
  private readonly tenants = new LRUCache<string, TenantState>({ max: MAX_TENANTS })
  /** Epochs are never reused, so a tenant forgotten and met again cannot see items of its earlier life. */
  private epochs = 0
  /** Renderings under way, by record id: requests that miss the same record at once share one read of it. */
  private readonly rendering = new Map<string, Rendering>()
  private readonly headQuery
  private readonly deltaQuery

  constructor(
    private readonly database: Database,
    maxBytes: number,
  ) {
    // A quarter of the memory for pages: their ids are small (thousands fit), and the bytes of pages sent are kept.
    const pagesBytes = Math.max(1, Math.floor(maxBytes / 4))
    this.items = new LRUCache<string, Entry>({
      maxSize: Math.max(1, maxBytes - pagesBytes),
      ttl: ITEM_TTL_MS,
      sizeCalculation: (e) => e.text.json.length + e.updatedAt.length + 96,
    })
    this.pages = new LRUCache<string, PageEntry>({ maxSize: pagesBytes, ttl: ITEM_TTL_MS, sizeCalculation: pageSize })
    const { db } = database
    this.headQuery = db.selectFrom('tenants').select('audit_seq').where('id', '=', '').compile()
    this.deltaQuery = db
      .selectFrom('audit_logs')
      .select(['seq', 'resource_type', 'resource_id', 'action', 'changes'])
      .where('tenant_id', '=', '')
      .where('seq', '>', 0)
      .where('seq', '<=', 0)
      .orderBy('seq')
      .limit(sql.lit(DELTA_LIMIT + 1))
      .compile()
    database.commits.on('audit', (tenantId, appended) => this.committedHere(tenantId, appended))
  }

  /** The tenant's view as of its chain head (`seq` when the caller has just read it), once what changed is forgotten. */
  async view(tenantId: string, seq?: number): Promise<ItemView> {
    const head = seq ?? (await this.head(tenantId))
    let state = this.tenants.get(tenantId)
    if (!state) {
      const epoch = ++this.epochs
      state = { seq: head, epoch, lists: epoch, forgotten: new Map(), forgottenFrom: head }
      this.tenants.set(tenantId, state)
    } else if (state.seq < head) {
      await this.catchUp(tenantId, state, head)
    }
    return { tenantId, state, seq: state.seq, epoch: state.epoch, lists: state.lists }
  }

  /**
   * Forgets what changed up to `head`. The requests that find the tenant's head moved by a write all want the same
   * changes: the first reads them, the others wait for that read (one query per write, not one per request).
   */
  private catchUp(tenantId: string, state: TenantState, head: number): Promise<void> {
    const underWay = state.catchingUp
    if (underWay && underWay.to >= head) return underWay.done
    const done = this.readChanges(tenantId, state, head).finally(() => {
      if (state.catchingUp?.done === done) state.catchingUp = undefined
    })
    state.catchingUp = { to: head, done }
    return done
  }

  private async readChanges(tenantId: string, state: TenantState, head: number): Promise<void> {
    const { rows } = await this.database.db.executeQuery<Change>({
      ...this.deltaQuery,
      parameters: [tenantId, state.seq, head],
    })
    // Another request may have moved the state on meanwhile; the changes read still cover the rest of the way.
    if (state.seq >= head) return
    this.apply(tenantId, state, rows, head)
  }

  /**
   * A mutation of this instance has committed these records: when they follow on from where the tenant's state is,
   * nothing else can lie between, and they move the state on without the read of the log that the next request
   * would otherwise make (one query per write). Records of other instances, or that arrive out of order, are left to
   * that read.
   */
  private committedHere(tenantId: string, appended: readonly Change[]): void {
    const state = this.tenants.peek(tenantId)
    if (!state || appended.length === 0 || appended[0].seq !== state.seq + 1) return
    this.apply(tenantId, state, appended, appended[appended.length - 1].seq)
  }

  /** Forgets what `changes` (the tenant's records after its state, up to `head`) changed, and moves the state to `head`. */
  private apply(tenantId: string, state: TenantState, changes: readonly Change[], head: number): void {
    const everything =
      changes.length > DELTA_LIMIT || changes.some((r) => !ITEM_TYPES.has(r.resource_type) || r.resource_id === null)
    if (everything) {
      state.epoch = ++this.epochs
      state.forgotten.clear()
      state.forgottenFrom = head
    } else {
      for (const r of changes) this.forget(tenantId, state, r.resource_type, r.resource_id!, r.seq)
    }
    if (everything || !changes.every((r) => this.keepsPages(r))) state.lists = ++this.epochs
    state.seq = head
  }

  /** Declares the family's fields that no list filter, search or sort reads: updates of only these keep list pages. */
  keepPagesAcross(type: string, unlisted: readonly string[]): void {
    this.unlisted.set(type, new Set(unlisted))
  }

  /** The page's ids (and its bytes as last sent, if any) if kept and current in this view. */
  getPage(view: ItemView, type: string, query: string): (PageIds & { body?: PageBody }) | undefined {
    const entry = this.pages.get(pageKey(view.tenantId, type, query))
    return entry?.lists === view.lists ? entry : undefined
  }

  /**
   * Keeps the bytes of a kept page, built from these kept renderings of its records: while every record of the page
   * is kept as that very rendering, the page is sent as those bytes again. A write of the tenant empties its read
   * cache, but changes few records: most pages are then sent as they were, without being built again.
   */
  putPageBody(view: ItemView, type: string, query: string, page: PageIds, body: PageBody): void {
    const key = pageKey(view.tenantId, type, query)
    const entry = this.pages.peek(key)
    // Only onto the page these records were listed for (a page put since is another entry).
    if (!this.listsUnchangedSince(view) || entry?.ids !== page.ids) return
    // Set anew so that the page's size counts its bytes.
    this.pages.set(key, { ...entry!, body })
  }

  /** Files a page read after the view was taken, unless a change since may have changed which records it lists. */
  putPage(view: ItemView, type: string, query: string, page: PageIds): void {
    if (!this.listsUnchangedSince(view)) return
    this.pages.set(pageKey(view.tenantId, type, query), { ...page, lists: view.lists })
  }

  /** The record's JSON if kept and current in this view; for a list row, only if rendered from that very version. */
  get(view: ItemView, type: string, id: string, updatedAt?: string): ItemText | undefined {
    const entry = this.items.get(id)
    if (!entry || entry.tenantId !== view.tenantId || entry.type !== type || entry.epoch !== view.epoch)
      return undefined
    return updatedAt === undefined || entry.updatedAt === updatedAt ? entry.text : undefined
  }

  /** Files a rendering made after the view was taken, unless the record (or everything) has been forgotten since. */
  put(view: ItemView, type: string, id: string, updatedAt: string, text: ItemText): void {
    if (!this.sameEpoch(view)) return
    const { state, seq } = view
    if (state.seq !== seq && (seq < state.forgottenFrom || (state.forgotten.get(id) ?? seq) > seq)) return
    this.items.set(id, { tenantId: view.tenantId, type, text, updatedAt, epoch: view.epoch })
  }

  /** Where the tenant's state stands now, for a write to file the rendering it makes (see putWritten). */
  mark(tenantId: string): WriteMark | undefined {
    const state = this.tenants.peek(tenantId)
    return state && { tenantId, state, epoch: state.epoch }
  }

  /**
   * Files the rendering a write made of its record as its last statement, audited as record `seq`, once committed:
   * the next reads need not render it again (on PostgreSQL, a round trip each). Only if the state has moved past
   * that record and nothing has forgotten the record since, nor everything since `mark` was taken before the write:
   * then no change the rendering could have missed (another record the rendering shows, changed meanwhile) lies
   * before `seq`.
   */
  putWritten(mark: WriteMark, type: string, { id, updatedAt, text }: RenderedRow, seq: number): void {
    const state = this.tenants.peek(mark.tenantId)
    if (state !== mark.state || state.epoch !== mark.epoch || state.seq < seq || state.forgotten.get(id) !== seq) return
    this.items.set(id, { tenantId: mark.tenantId, type, text, updatedAt, epoch: state.epoch })
  }

  /**
   * The renderings of those of `ids` that exist, for `view`: taken from renderings of them under way that the view
   * may use, the rest read with `read` in one go and filed. On PostgreSQL a rendering is a round trip, and the
   * requests that missed the same record meanwhile each read it again.
   */
  async render(
    view: ItemView,
    type: string,
    ids: string[],
    read: (ids: string[]) => Promise<RenderedRow[]>,
  ): Promise<Map<string, ItemText>> {
    const found = new Map<string, ItemText>()
    const waits: Promise<void>[] = []
    const own: string[] = []
    for (const id of ids) {
      const underWay = this.sharable(view, type, id)
      if (underWay) waits.push(underWay.then((text) => void (text && found.set(id, text))))
      else own.push(id)
    }
    if (own.length > 0) {
      const batch = read(own).then((rows) => {
        for (const row of rows) this.put(view, type, row.id, row.updatedAt, row.text)
        return new Map(rows.map((row) => [row.id, row.text]))
      })
      for (const id of own) {
        const rendering: Rendering = { view, type, text: batch.then((texts) => texts.get(id)) }
        this.rendering.set(id, rendering)
        const done = () => {
          if (this.rendering.get(id) === rendering) this.rendering.delete(id)
        }
        rendering.text.then(done, done)
      }
      waits.push(
        batch.then((texts) => {
          for (const [id, text] of texts) found.set(id, text)
        }),
      )
    }
    await Promise.all(waits)
    return found
  }

  /**
   * A rendering of the record under way that `view` may use: begun in the same epoch, and for the same view or an
   * older one since which the record has not been forgotten (so it shows every change of the record the view knows
   * of, and everything else it shows is unchanged since).
   */
  private sharable(view: ItemView, type: string, id: string): Promise<ItemText | undefined> | undefined {
    const underWay = this.rendering.get(id)
    if (!underWay || underWay.type !== type || underWay.view.state !== view.state || underWay.view.epoch !== view.epoch)
      return undefined
    const since = underWay.view.seq
    if (since < view.seq && (since < view.state.forgottenFrom || (view.state.forgotten.get(id) ?? since) > since))
      return undefined
    return underWay.text
  }

  private forget(tenantId: string, state: TenantState, type: string, id: string, at: number): void {
    const entry = this.items.peek(id)
    if (entry?.tenantId === tenantId && entry.type === type) this.items.delete(id)
    // Re-inserted, so that the map's first entry is the longest ago forgotten.
    state.forgotten.delete(id)
    state.forgotten.set(id, at)
    if (state.forgotten.size > FORGOTTEN_KEPT) {
      const [[oldest, oldestAt]] = state.forgotten
      state.forgotten.delete(oldest)
      state.forgottenFrom = Math.max(state.forgottenFrom, oldestAt)
    }
  }

  private sameEpoch({ tenantId, state, epoch }: ItemView): boolean {
    return this.tenants.peek(tenantId) === state && state.epoch === epoch
  }

  /** No change since the view could have changed which records a list holds or their order (see `unlisted`). */
  private listsUnchangedSince(view: ItemView): boolean {
    return this.sameEpoch(view) && view.state.lists === view.lists
  }

  /** An update of a family's record whose audited changes are all unlisted fields. */
  private keepsPages(change: Change): boolean {
    const unlisted = this.unlisted.get(change.resource_type)
    if (!unlisted || change.action !== `${change.resource_type}.updated`) return false
    return Object.keys(JSON.parse(change.changes ?? '{}') as object).every((field) => unlisted.has(field))
  }

  private async head(tenantId: string): Promise<number> {
    const query = { ...this.headQuery, parameters: [tenantId] }
    const rows =
      this.database.readNow<{ audit_seq: number }>(query) ??
      (await this.database.db.executeQuery<{ audit_seq: number }>(query)).rows
    return rows[0]?.audit_seq ?? 0
  }
}

/** A tenant's state before a write (see putWritten). */
export interface WriteMark {
  tenantId: string
  state: TenantState
  epoch: number
}

/** A record as its family's render read it. */
export interface RenderedRow {
  id: string
  updatedAt: string
  text: ItemText
}

interface Rendering {
  view: ItemView
  type: string
  text: Promise<ItemText | undefined>
}

interface Change {
  seq: number
  resource_type: string
  resource_id: string | null
  action: string
  changes: string | null
}

const pageKey = (tenantId: string, type: string, query: string) => `${tenantId} ${type} ${query}`
// A page's bytes count twice: the texts they were built from stay with them, even once the items are dropped.
const pageSize = (page: PageEntry, key: string) =>
  page.ids.reduce(
    (n, id) => n + id.length + 16,
    key.length + 128 + (page.pagination.next_cursor?.length ?? 0) + 2 * (page.body?.bytes.length ?? 0),
  )
