import { createHash } from 'node:crypto'
import * as tar from 'tar-stream'
import type { Database } from '../../src/db/create-db.js'

/** A tar archive of these entries (name → content, and header fields to set). */
export async function archive(entries: [string, Buffer | string, Partial<tar.Header>?][]): Promise<Buffer> {
  const pack = tar.pack()
  for (const [name, data, header] of entries)
    pack.entry({ name, ...header }, typeof data === 'string' ? Buffer.from(data) : data)
  pack.finalize()
  const chunks: Buffer[] = []
  for await (const chunk of pack) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The entries of an archive, read whole (test-sized). */
export async function entries(data: Buffer): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>()
  const extract = tar.extract()
  extract.end(data)
  for await (const entry of extract) {
    const parts: Buffer[] = []
    for await (const chunk of entry) parts.push(chunk as Buffer)
    out.set(entry.header.name, Buffer.concat(parts))
  }
  return out
}

/** Every NDJSON line of a bundle's records, sorted. */
export async function recordLines(data: Buffer): Promise<string[]> {
  const lines: string[] = []
  for (const [name, content] of await entries(data))
    if (name.startsWith('records/')) lines.push(...content.toString('utf8').split('\n').filter(Boolean))
  return lines.sort()
}

/** The entry `files/<sha256>` of these bytes. */
export const fileEntry = (data: Buffer): [string, Buffer] => [
  `files/${createHash('sha256').update(data).digest('hex')}`,
  data,
]

/** What a bundle could change: the tenant's rows of each table an apply writes, and every tenant's stored files. */
export async function tenantCounts(database: Database, tenant: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  const tables = ['risk_types', 'vendors', 'models', 'use_cases', 'evidence', 'audit_logs'] as const
  for (const table of tables) {
    const rows = await database.db.selectFrom(table).select('id').where('tenant_id', '=', tenant).execute()
    counts[table] = rows.length
  }
  counts.evidence_blobs = (await database.db.selectFrom('evidence_blobs').select('id').execute()).length
  counts.evidence_chunks = (await database.db.selectFrom('evidence_chunks').select('seq').execute()).length
  const usage = await database.db
    .selectFrom('evidence_usage')
    .select('bytes')
    .where('tenant_id', '=', tenant)
    .executeTakeFirst()
  counts.evidence_bytes = Number(usage?.bytes ?? 0)
  return counts
}
