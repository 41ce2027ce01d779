// The controls table's state in the address, what it asks the API for, and how a row reads.

import { readAddress, writeAddress } from './address'

export interface ControlsQuery {
  status?: string
  /** 'true' or 'false', as the API's open and overdue filters take them. */
  open?: string
  overdue?: string
  /** A user or team id. */
  assignee?: string
  after?: string
}

const KEYS = ['status', 'open', 'overdue', 'assignee', 'after'] as const

const STATUSES = ['pending', 'in_progress', 'implemented', 'not_applicable'] as const
type ControlStatus = (typeof STATUSES)[number]

/** The statuses still to do: what the API's open and overdue filters and the dashboard's overdue figure count. */
const OPEN_STATUSES: readonly string[] = ['pending', 'in_progress']

export function parseControlsQuery(search: string): ControlsQuery {
  return readAddress(search, KEYS)
}

/** A changed filter starts again at the first page; only paging keeps the cursor. */
export function controlsWithChange(current: ControlsQuery, change: Partial<ControlsQuery>): string {
  return writeAddress(KEYS, current, change)
}

/** Where the controls list filtered by `change` is, for a link from another page. */
export function controlsHref(change: Partial<ControlsQuery> = {}): string {
  return `/controls${controlsWithChange({}, change)}`
}

/** Which controls the list shows besides its other filters: all of them, the open ones, or the overdue ones. */
export type ControlScope = 'all' | 'open' | 'overdue'

export function scopeOf(q: ControlsQuery): ControlScope {
  return q.overdue === 'true' ? 'overdue' : q.open === 'true' ? 'open' : 'all'
}

/** The address change for a scope: open or overdue, never both (an overdue control is open). */
export function scopeChange(scope: ControlScope): Pick<ControlsQuery, 'open' | 'overdue'> {
  return { open: scope === 'open' ? 'true' : undefined, overdue: scope === 'overdue' ? 'true' : undefined }
}

const flag = (v: string | undefined) => (v === 'true' ? true : v === 'false' ? false : undefined)

/** The list call's query (camelCase, as the client takes it); a value the API does not know is no filter. */
export function controlsApiQuery(q: ControlsQuery, pageLimit = 50) {
  const open = flag(q.open)
  const overdue = flag(q.overdue)
  return {
    pageLimit,
    ...(q.status && (STATUSES as readonly string[]).includes(q.status) ? { status: q.status as ControlStatus } : {}),
    ...(open !== undefined ? { open } : {}),
    ...(overdue !== undefined ? { overdue } : {}),
    ...(q.assignee ? { assigneeId: q.assignee } : {}),
    ...(q.after ? { pageAfter: q.after } : {}),
  }
}

/** Still to do and due before `today` (YYYY-MM-DD, UTC), as the API judges overdue. */
export function isOverdue(c: { status: string; dueDate?: string | null }, today: string): boolean {
  return OPEN_STATUSES.includes(c.status) && c.dueDate != null && c.dueDate < today
}

/** How many of a control's required evidence requirements have evidence, in words. */
export function requiredEvidence(requirements: { required: boolean; met: boolean }[]): string {
  const required = requirements.filter((r) => r.required)
  if (required.length === 0) return 'None required'
  return `${required.filter((r) => r.met).length} of ${required.length}`
}
