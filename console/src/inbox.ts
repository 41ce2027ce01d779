// What the inbox lists, and in which order.

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
