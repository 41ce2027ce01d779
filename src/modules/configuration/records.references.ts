import { AppError } from '../../http/errors.js'
import type { Tx } from '../../shared/mutation.js'
import { emailKey } from '../../shared/records.js'
import { nameKey } from '../../shared/search.js'
import { pointerOf } from './configuration.document.js'
import { type Canonical, NATURAL_KEYS } from './configuration.model.js'
import { allRecords } from './records.archive.js'
import { evidenceKeyWhere, findNamedMany } from './records.repo.js'
import type { EvidenceRecord, ModelRecord, RecordOwner, UseCaseRecord, VendorRecord } from './records.schemas.js'

type Obj = Record<string, unknown>

/** One reference a record makes to nothing: where it first appears (the entry, the line, the record's field). */
export interface UnresolvedReference {
  field: string
  pointer: string
  message: string
  file: string
  line: number
}

/** Unresolved references one 422 lists; the detail counts them all. */
const LISTED = 100
/** Records' references to other records looked up in the tenant at a time. */
const LOOKUP_BATCH = 100

type Section = 'users' | 'teams' | 'custom_fields' | 'questionnaires' | 'policy_packs' | 'policy_controls'
type Linked = 'vendors' | 'models' | 'evidence'

/**
 * The configuration keys records may name once the document is applied: the document's, and the tenant's for
 * each section the document leaves out or does not prune. Versioned objects count by KEY and by KEY+version.
 */
export function configurationKeys(
  tenant: Canonical,
  desired: Partial<Canonical>,
  prune: boolean,
): Record<Section, Set<string>> {
  const keysOf = (section: Section) => {
    const keys = new Set<string>()
    const sources = [desired[section], prune && desired[section] ? undefined : tenant[section]]
    for (const objects of sources) {
      for (const o of (objects ?? []) as Obj[]) {
        keys.add(NATURAL_KEYS[section](o))
        for (const v of (o.versions ?? []) as Obj[]) keys.add(`${o.key}+${v.version}`)
      }
    }
    return keys
  }
  return {
    users: keysOf('users'),
    teams: keysOf('teams'),
    custom_fields: keysOf('custom_fields'),
    questionnaires: keysOf('questionnaires'),
    policy_packs: keysOf('policy_packs'),
    policy_controls: keysOf('policy_controls'),
  }
}

/**
 * Every reference of the bundle's records (owners, custom fields, questionnaires, packs, controls, linked models
 * and vendors, evidence) resolved against the document, the bundle and the tenant, reading the records as a stream:
 * only the distinct keys named are kept, never the records. A 422 names each unresolved one where it first appears.
 */
export async function checkReferences(
  db: Tx,
  tenantId: string,
  path: string,
  config: Record<Section, Set<string>>,
): Promise<void> {
  const unresolved = new Map<string, UnresolvedReference & { order: number }>()
  /** Records named by other records, by kind and key, with their first place; and the bundle's own records. */
  const named: Record<Linked, Map<string, { place: Place; shown: string; seq: number }>> = {
    vendors: new Map(),
    models: new Map(),
    evidence: new Map(),
  }
  const brought: Record<Linked, Set<string>> = { vendors: new Set(), models: new Set(), evidence: new Set() }
  /** Each reference in the order it appears, so that the errors come in the bundle's order. */
  let seq = 0
  const miss = (id: string, place: Place, message: string, order: number) => {
    if (unresolved.has(id)) return
    const { at, file, line, pointer } = place
    unresolved.set(id, { field: `${at} ${pointer}`, pointer, message, file, line, order })
  }

  for await (const { kind, record, at } of allRecords<Obj>(path)) {
    const [file, line] = splitAt(at)
    const place = (...pointer: (string | number)[]): Place => ({ at, file, line, pointer: pointerOf(...pointer) })
    const need = (section: Section, key: string, shown: string, where: Place, what: string) => {
      seq++
      if (!config[section].has(key))
        miss(`${section} ${key}`, where, `no ${what} ${shown} in the document or the tenant`, seq)
    }
    const link = (linked: Linked, key: string, where: Place) => {
      const k = linked === 'evidence' ? key : nameKey(key)
      seq++
      if (!named[linked].has(k)) named[linked].set(k, { place: where, shown: key, seq })
    }
    if (kind === 'evidence') {
      brought.evidence.add((record as EvidenceRecord).key)
      continue
    }
    const governed = record as VendorRecord | ModelRecord | UseCaseRecord
    if (kind !== 'use_cases') brought[kind].add(nameKey(governed.name))
    const owner = governed.owner as RecordOwner
    if (owner && 'email' in owner) need('users', emailKey(owner.email), owner.email, place('owner'), 'user')
    else if (owner) need('teams', nameKey(owner.team), `"${owner.team}"`, place('owner'), 'team')
    for (const name of Object.keys(governed.custom_fields))
      need('custom_fields', nameKey(name), `"${name}"`, place('custom_fields', name), 'custom field')
    if (kind === 'models')
      for (const [i, v] of (record as ModelRecord).vendors.entries()) link('vendors', v, place('vendors', i))
    if (kind !== 'use_cases') continue
    const uc = record as UseCaseRecord
    for (const [i, m] of uc.models.entries()) link('models', m, place('models', i))
    for (const [i, v] of uc.vendors.entries()) link('vendors', v, place('vendors', i))
    for (const [i, q] of uc.questionnaires.entries()) {
      need(
        'questionnaires',
        q.questionnaire,
        q.questionnaire,
        place('questionnaires', i, 'questionnaire'),
        'questionnaire',
      )
      for (const [j, a] of q.answers.entries())
        for (const [k, e] of a.evidence.entries())
          link('evidence', e, place('questionnaires', i, 'answers', j, 'evidence', k))
    }
    for (const [i, p] of uc.policy_packs.entries())
      need('policy_packs', p.pack, p.pack, place('policy_packs', i, 'pack'), 'policy pack')
    for (const [i, c] of uc.controls.entries()) {
      need('policy_controls', c.control, c.control, place('controls', i, 'control'), 'policy control')
      for (const [j, e] of c.evidence.entries()) link('evidence', e.key, place('controls', i, 'evidence', j, 'key'))
    }
  }

  // What the bundle does not bring must be in the tenant; looked up a batch at a time.
  for (const linked of ['vendors', 'models', 'evidence'] as const) {
    const wanted = [...named[linked]].filter(([key]) => !brought[linked].has(key))
    for (let i = 0; i < wanted.length; i += LOOKUP_BATCH) {
      const batch = wanted.slice(i, i + LOOKUP_BATCH)
      const found = await inTenant(
        db,
        tenantId,
        linked,
        batch.map(([key]) => key),
      )
      for (const [key, { place, shown, seq: order }] of batch) {
        if (found.has(key)) continue
        const what = linked === 'models' ? 'model' : linked === 'vendors' ? 'vendor' : 'evidence'
        miss(`${linked} ${key}`, place, `no ${what} "${shown}" in the bundle or the tenant`, order)
      }
    }
  }
  if (unresolved.size === 0) return
  const errors = [...unresolved.values()].sort((a, b) => a.order - b.order).map(({ order: _o, ...e }) => e)
  throw new AppError(
    'validation_failed',
    `the bundle's records have ${errors.length} unresolved reference${errors.length === 1 ? '' : 's'}${
      errors.length > LISTED ? ` (the first ${LISTED} listed)` : ''
    }: ${errors
      .slice(0, 5)
      .map((e) => `${e.field} ${e.message}`)
      .join('; ')}`,
    errors.slice(0, LISTED) as unknown as { field: string; message: string }[],
  )
}

interface Place {
  at: string
  file: string
  line: number
  pointer: string
}

const splitAt = (at: string): [string, number] => {
  const colon = at.lastIndexOf(':')
  return [at.slice(0, colon), Number(at.slice(colon + 1))]
}

/** The keys of these that name a record of the tenant (vendors and models by name key, evidence by its key). */
async function inTenant(db: Tx, tenantId: string, linked: Linked, keys: string[]): Promise<Set<string>> {
  if (linked !== 'evidence') {
    const rows = await findNamedMany(db, tenantId, linked, keys)
    return new Set(rows.map((r) => r.name_key))
  }
  const found = new Set<string>()
  for (const key of keys) {
    const row = await db
      .selectFrom('evidence')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where(evidenceKeyWhere(key))
      .limit(1)
      .executeTakeFirst()
    if (row) found.add(key)
  }
  return found
}
