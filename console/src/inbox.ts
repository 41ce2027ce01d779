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

/** Who the person acts for: themselves, then each of their teams (by id, with the words the inbox shows). */
export type Owners = Map<string, string>

interface ControlLike {
  name: string
  status: string
  dueDate?: string | null
  assignee?: { ownerId: string; ownerType: string; name: string } | null
}

/**
 * The controls waiting on the person on one use case: open (not done, not "does not apply") and assigned to them or
 * to one of their teams; overdue when the due date is before today.
 */
export function controlItems(
  useCase: { id: string; name: string },
  controls: ControlLike[],
  owners: Owners,
  today: string,
): InboxItem[] {
  const out: InboxItem[] = []
  for (const c of controls) {
    if (c.status === 'implemented' || c.status === 'not_applicable') continue
    const forWhom = c.assignee ? owners.get(c.assignee.ownerId) : undefined
    if (forWhom === undefined) continue
    out.push({
      kind: 'control',
      title: `Control “${c.name}”`,
      detail: `${useCase.name}${c.dueDate ? `, due ${c.dueDate}` : ''}${forWhom ? `, ${forWhom}` : ''}`,
      href: `/use-cases/${useCase.id}#controls`,
      due: c.dueDate ?? undefined,
      overdue: c.dueDate != null && c.dueDate < today,
    })
  }
  return out
}

/** The words that say a record is the person's through a team ('' for their own). */
export function ownersOf(userId: string, teams: { id: string; name: string }[]): Owners {
  return new Map([[userId, ''], ...teams.map((t) => [t.id, `for team ${t.name}`] as [string, string])])
}
