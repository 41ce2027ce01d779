import type { AuditLog } from './audit-logs.schemas.js'

/** The CSV columns, in order; nested values (actor, changes, metadata) are flattened or written as JSON. */
export const CSV_COLUMNS = [
  'id',
  'created_at',
  'action',
  'resource_type',
  'resource_id',
  'resource_name',
  'sub_object_type',
  'sub_object_id',
  'sub_object_name',
  'use_case_id',
  'actor_type',
  'actor_id',
  'actor_name',
  'source',
  'request_id',
  'changes',
  'metadata',
] as const

/** What a spreadsheet reads as the start of a formula (OWASP CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * RFC 4180: quote a field holding a comma, quote, CR or LF, doubling the quotes inside. A field that a
 * spreadsheet would evaluate as a formula gets a leading ' (OWASP), so a record name cannot run in the auditor's sheet.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const raw = typeof value === 'string' ? value : JSON.stringify(value)
  const text = FORMULA_START.test(raw) ? `'${raw}` : raw
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function csvRow(log: AuditLog): string {
  const flat: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    ...log,
    actor_type: log.actor.type,
    actor_id: log.actor.id,
    actor_name: log.actor.name,
  }
  return `${CSV_COLUMNS.map((column) => csvField(flat[column])).join(',')}\r\n`
}

export const csvHeader = `${CSV_COLUMNS.join(',')}\r\n`
