// What the inbox lists, in which order, and how far it reads.

export interface InboxItem {
  kind: 'questionnaire' | 'control' | 'gate'
  title: string
  detail: string
  href: string
  /** Overdue controls first, then by due date; undefined sorts last. */
  due?: string
  overdue?: boolean
}

/** Overdue first, then the earliest due, then questionnaires before gates (answers are what a gate waits for). */
export function sortInbox(items: InboxItem[]): InboxItem[] {
  const rank = { control: 0, questionnaire: 1, gate: 2 }
  return [...items].sort(
    (a, b) =>
      Number(b.overdue ?? false) - Number(a.overdue ?? false) ||
      (a.due ?? '9999').localeCompare(b.due ?? '9999') ||
      rank[a.kind] - rank[b.kind] ||
      a.title.localeCompare(b.title),
  )
}

/** Who the person acts for: themselves, then each of their teams (by id, with the words the inbox shows). */
export type Owners = Map<string, string>

interface ControlLike {
  name: string
  useCaseId: string
  useCaseName: string
  dueDate?: string | null
  assignee?: { ownerId: string } | null
}

/**
 * Open controls assigned to the person or one of their teams (as `GET /use_case_controls?assignee_id=&open=true`
 * lists them), each said for whom; overdue when the due date is before today.
 */
export function controlItems(controls: ControlLike[], owners: Owners, today: string): InboxItem[] {
  return controls.map((c) => {
    const forWhom = (c.assignee && owners.get(c.assignee.ownerId)) || ''
    return {
      kind: 'control',
      title: `Control “${c.name}”`,
      detail: `${c.useCaseName}${c.dueDate ? `, due ${c.dueDate}` : ''}${forWhom ? `, ${forWhom}` : ''}`,
      href: `/use-cases/${c.useCaseId}#controls`,
      due: c.dueDate ?? undefined,
      overdue: c.dueDate != null && c.dueDate < today,
    }
  })
}

/** The words that say a record is the person's through a team ('' for their own). */
export function ownersOf(userId: string, teams: { id: string; name: string }[]): Owners {
  return new Map([[userId, ''], ...teams.map((t) => [t.id, `for team ${t.name}`] as [string, string])])
}

/** The records whose questionnaires the inbox reads. */
export type RecordKind = 'use_case' | 'model' | 'vendor'

/** How far the inbox reads: past a bound it stops and says so, with a link to the full list (never a silent cut). */
export const INBOX_BOUNDS = {
  /** The person's teams (one page). */
  teams: 100,
  /** Records of each kind per owner (the person, each team), most recently changed first. */
  recordsPerOwner: 100,
  /** Open controls assigned to the person and to each team: this many overdue ones, then this many others. */
  controlsPerOwner: 100,
  /** Requests in flight at once (the browser holds about six per host anyway; the rest wait here, not there). */
  parallel: 6,
} as const

const REGISTRY_PATH: Record<RecordKind, string> = { use_case: '/use-cases', model: '/models', vendor: '/vendors' }
const KIND_WORDS: Record<RecordKind, string> = { use_case: 'use cases', model: 'models', vendor: 'vendors' }

/** Where a record's questionnaires are answered: the use case page, or the model's or vendor's own page. */
export function questionnaireHref(kind: RecordKind, id: string): string {
  return `${REGISTRY_PATH[kind]}/${id}#questionnaires`
}

export interface PageLike<T> {
  items: T[]
  pagination: { hasMore: boolean; nextCursor?: string | null }
}

/**
 * Reads a list with its cursor until it ends or `max` items are read; `more` says items were left unread.
 * `read` gets the cursor (undefined first) and the page size to ask for; a failed read throws.
 */
export async function readPages<T>(
  read: (after: string | undefined, pageLimit: number) => Promise<PageLike<T>>,
  max: number,
  pageLimit = 100,
): Promise<{ items: T[]; more: boolean }> {
  const items: T[] = []
  for (let after: string | undefined; ; ) {
    const page = await read(after, Math.min(pageLimit, max - items.length))
    items.push(...page.items.slice(0, max - items.length))
    after = page.pagination.nextCursor ?? undefined
    const more = page.pagination.hasMore && after !== undefined
    if (!more) return { items, more: false }
    if (items.length >= max) return { items, more: true }
  }
}

/** `work` over each item, at most `limit` at a time; the results in the items' order. */
export async function mapLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await work(items[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}

interface AttachmentLike {
  key: string
  name: string
  progress: { required: number; requiredAnswered: number; complete: boolean }
}

/** The questionnaires of one record with required answers missing, said for the person or the team owning it. */
export function questionnaireItems(
  record: { kind: RecordKind; id: string; name: string; owner?: { ownerId: string } | null },
  attachments: AttachmentLike[],
  owners: Owners,
): InboxItem[] {
  const forWhom = record.owner ? owners.get(record.owner.ownerId) : undefined
  const what = record.kind === 'use_case' ? '' : record.kind === 'model' ? 'model ' : 'vendor '
  return attachments
    .filter((q) => !q.progress.complete)
    .map((q) => ({
      kind: 'questionnaire' as const,
      title: `Answer “${q.name}”`,
      detail: `${what}${record.name}: ${q.progress.required - q.progress.requiredAnswered} required answer(s) missing${forWhom ? `, ${forWhom}` : ''}`,
      href: questionnaireHref(record.kind, record.id),
    }))
}

/** A list the inbox did not read to its end: what was left, and where the whole of it is. */
export interface InboxCut {
  text: string
  /** Where the whole list is, when the console has one. */
  href?: string
}

/** The cut of the records of one kind owned by the person (ownerName '') or one of their teams. */
export function recordsCut(kind: RecordKind, ownerId: string, ownerName: string, read: number): InboxCut {
  const whose = ownerName ? `team ${ownerName}` : 'you'
  return {
    text: `More ${KIND_WORDS[kind]} are owned by ${whose} than the ${read} most recently changed the inbox looks into: open all ${KIND_WORDS[kind]} ${ownerName ? 'the team owns' : 'you own'}`,
    href: `${REGISTRY_PATH[kind]}?owner=${encodeURIComponent(ownerId)}&sort=-updated_at`,
  }
}

/** The cut of the open controls assigned to the person (ownerName '') or one of their teams. */
export function controlsCut(ownerName: string, overdue: boolean, read: number): InboxCut {
  const whom = ownerName ? `team ${ownerName}` : 'you'
  const which = overdue ? 'overdue controls' : 'open controls not yet overdue'
  return { text: `More than ${read} ${which} are assigned to ${whom}; the inbox lists the ${read} created first` }
}
