import type { AuditLog } from './audit-logs.schemas.js'

/** The CSV columns, in order; nested values (actor, changes, metadata) are flattened or written as JSON. */
export const CSV_COLUMNS = [
  'id', 'created_at', 'action', 'resource_type', 'resource_id', 'resource_name', 'sub_object_type', 'sub_object_id',
  'sub_object_name', 'use_case_id', 'actor_type', 'actor_id', 'actor_name', 'source', 'request_id', 'changes', 'metadata',
] as const

/** RFC 4180: quote a field holding a comma, quote, CR or LF, doubling the quotes inside. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function csvRow(log: AuditLog): string {
  const flat: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    ...log,
    actor_type: log.actor.type,
    actor_id: log.actor.id,
    actor_name: log.actor.name,
  }
  return CSV_COLUMNS.map((column) => csvField(flat[column])).join(',') + '\r\n'
}

export const csvHeader = CSV_COLUMNS.join(',') + '\r\n'

export function ndjsonRow(log: AuditLog): string {
  return JSON.stringify(log) + '\n'
}
