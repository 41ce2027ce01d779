// Plain language for the values the API speaks in.

export const RISK_LABEL: Record<string, string> = { high: 'High', medium: 'Medium', low: 'Low', none: 'None' }
export const STEP_LABEL: Record<string, string> = {
  assessment: 'Assessment',
  evidence_collection: 'Collecting evidence',
  clear: 'Cleared',
  rejected: 'Rejected',
}
export const CONTROL_STATUS_LABEL: Record<string, string> = {
  pending: 'Not started',
  in_progress: 'In progress',
  implemented: 'Done',
  not_applicable: 'Does not apply',
}
/** The use case list's questionnaire completion filter, in the words of the dashboard and the registry. */
export const COMPLETION_LABEL: Record<string, string> = {
  complete: 'All answered',
  incomplete: 'Answers missing',
  none: 'No questionnaire',
}
export const MODEL_STATUS_LABEL: Record<string, string> = {
  none: 'Not set',
  in_development: 'In development',
  in_production: 'In production',
  retired: 'Retired',
}
export const VENDOR_STATUS_LABEL: Record<string, string> = {
  active: 'Active',
  under_review: 'Under review',
  inactive: 'Inactive',
}

export const label = (map: Record<string, string>, value: string | null | undefined, empty = 'Not set') =>
  value == null ? empty : (map[value] ?? value)

export const options = (map: Record<string, string>) => Object.entries(map).map(([value, l]) => ({ value, label: l }))

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—'
  const d = new Date(value)
  return Number.isNaN(d.getTime()) ? value : d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' })
}
