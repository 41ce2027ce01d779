import type { Kysely } from 'kysely'
import type { DialectName } from '../db/create-db.js'
import type { Tables } from '../db/tables.js'
import type { AuditEntry } from './mutation.js'
import { applyKeyset, type Keyset, pageTextOf, withinTextBudget } from './pagination.js'

/**
 * The plain associations between catalog records, and their tenant-scoped queries.
 * Every link row has an owner (the side whose audit trail records it: `use_case.model_linked`)
 * and a member; either side can list the other.
 */

type Db = Kysely<Tables>
// The link queries are written once for every link table, so they address tables and columns by name.
// biome-ignore lint/suspicious/noExplicitAny: link tables are named by the caller at run time
type AnyDb = Kysely<any>

export type LinkEnd = 'use_case' | 'model' | 'vendor' | 'risk_scenario' | 'risk_type'

export const END_TABLES = {
  use_case: 'use_cases',
  model: 'models',
  vendor: 'vendors',
  risk_scenario: 'risk_scenarios',
  risk_type: 'risk_types',
} as const satisfies Record<LinkEnd, keyof Tables>

export interface LinkTable {
  table:
    | 'use_case_models'
    | 'use_case_vendors'
    | 'model_vendors'
    | 'use_case_risk_scenarios'
    | 'risk_scenario_risk_types'
  owner: LinkEnd
  ownerColumn: string
  member: LinkEnd
  memberColumn: string
}

export const LINK_TABLES = {
  use_case_models: {
    table: 'use_case_models',
    owner: 'use_case',
    ownerColumn: 'use_case_id',
    member: 'model',
    memberColumn: 'model_id',
  },
  use_case_vendors: {
    table: 'use_case_vendors',
    owner: 'use_case',
    ownerColumn: 'use_case_id',
    member: 'vendor',
    memberColumn: 'vendor_id',
  },
  use_case_risk_scenarios: {
    table: 'use_case_risk_scenarios',
    owner: 'use_case',
    ownerColumn: 'use_case_id',
    member: 'risk_scenario',
    memberColumn: 'risk_scenario_id',
  },
  model_vendors: {
    table: 'model_vendors',
    owner: 'model',
    ownerColumn: 'model_id',
    member: 'vendor',
    memberColumn: 'vendor_id',
  },
  risk_scenario_risk_types: {
    table: 'risk_scenario_risk_types',
    owner: 'risk_scenario',
    ownerColumn: 'risk_scenario_id',
    member: 'risk_type',
    memberColumn: 'risk_type_id',
  },
} as const satisfies Record<string, LinkTable>

/** One way through a link table: from `side`'s record to the records on the other side. */
export interface LinkPath {
  link: LinkTable
  from: 'owner' | 'member'
}

export interface Named {
  id: string
  name: string
}

const ends = (path: LinkPath) =>
  path.from === 'owner'
    ? {
        fromEnd: path.link.owner,
        fromColumn: path.link.ownerColumn,
        toEnd: path.link.member,
        toColumn: path.link.memberColumn,
      }
    : {
        fromEnd: path.link.member,
        fromColumn: path.link.memberColumn,
        toEnd: path.link.owner,
        toColumn: path.link.ownerColumn,
      }

export function findNamed(db: Db, tenantId: string, end: LinkEnd, id: string): Promise<Named | undefined> {
  return (db as AnyDb)
    .selectFrom(END_TABLES[end])
    .select(['id', 'name'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/**
 * The records linked to `id` along `path`, keyset-paginated on their id, each with the link's own
 * columns (`likelihood`, `impact`) under `link_*` names when `linkColumns` asks for them.
 */
export function listLinked<Row>(
  db: Db,
  tenantId: string,
  path: LinkPath,
  id: string,
  ks: Keyset,
  linkColumns: string[] = [],
): Promise<Row[]> {
  const { toEnd, fromColumn, toColumn } = ends(path)
  const target = END_TABLES[toEnd]
  const q = (db as AnyDb)
    .selectFrom(target)
    .innerJoin(`${path.link.table} as l`, `l.${toColumn}`, `${target}.id`)
    .selectAll(target)
    .select(linkColumns.map((c) => `l.${c} as link_${c}`))
    .where(`${target}.tenant_id`, '=', tenantId)
    .where('l.tenant_id', '=', tenantId)
    .where(`l.${fromColumn}`, '=', id)
  return withinTextBudget(db as AnyDb, applyKeyset(q, ks), ks, pageTextOf(target)).execute() as Promise<Row[]>
}

export function findLink<Row extends object>(
  db: Db,
  tenantId: string,
  link: LinkTable,
  ownerId: string,
  memberId: string,
): Promise<Row | undefined> {
  return (db as AnyDb)
    .selectFrom(link.table)
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(link.ownerColumn, '=', ownerId)
    .where(link.memberColumn, '=', memberId)
    .executeTakeFirst() as Promise<Row | undefined>
}

/** Inserts a link unless it exists; true when this call made it. */
export async function insertLink(
  db: Db,
  tenantId: string,
  link: LinkTable,
  ownerId: string,
  memberId: string,
  createdAt: string,
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  const result = await (db as AnyDb)
    .insertInto(link.table)
    .values({
      tenant_id: tenantId,
      [link.ownerColumn]: ownerId,
      [link.memberColumn]: memberId,
      created_at: createdAt,
      ...extra,
    })
    .onConflict((oc) => oc.columns([link.ownerColumn, link.memberColumn]).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
}

export async function updateLink(
  db: Db,
  tenantId: string,
  link: LinkTable,
  ownerId: string,
  memberId: string,
  changes: Record<string, unknown>,
): Promise<void> {
  await (db as AnyDb)
    .updateTable(link.table)
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where(link.ownerColumn, '=', ownerId)
    .where(link.memberColumn, '=', memberId)
    .execute()
}

/** Deletes a link; true when there was one. */
export async function deleteLink(
  db: Db,
  tenantId: string,
  link: LinkTable,
  ownerId: string,
  memberId: string,
): Promise<boolean> {
  const result = await (db as AnyDb)
    .deleteFrom(link.table)
    .where('tenant_id', '=', tenantId)
    .where(link.ownerColumn, '=', ownerId)
    .where(link.memberColumn, '=', memberId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** The audit entry of a link or unlink, always told from the owner's side. */
export function linkAudit(
  link: LinkTable,
  verb: 'linked' | 'unlinked' | 'link_updated',
  owner: Named,
  member: Named,
  extra: Pick<AuditEntry, 'changes' | 'metadata'> = {},
): AuditEntry {
  return {
    action: `${link.owner}.${link.member}_${verb}`,
    resourceType: link.owner,
    resourceId: owner.id,
    resourceName: owner.name,
    subObjectType: link.member,
    subObjectId: member.id,
    subObjectName: member.name,
    useCaseId: link.owner === 'use_case' ? owner.id : null,
    ...extra,
  }
}

/**
 * Removes every plain association of a record about to be deleted and returns one audit entry per
 * removed link. On PostgreSQL the record is locked first, so a concurrent link waits and then fails
 * its foreign key instead of being removed by the cascade without an audit record.
 */
export async function removeAssociations(
  db: Db,
  dialect: DialectName,
  tenantId: string,
  end: LinkEnd,
  record: Named,
): Promise<AuditEntry[]> {
  const adb = db as AnyDb
  if (dialect === 'postgres') {
    await adb
      .selectFrom(END_TABLES[end])
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', record.id)
      .forUpdate()
      .execute()
  }
  const entries: AuditEntry[] = []
  for (const link of Object.values(LINK_TABLES) as LinkTable[]) {
    for (const from of ['owner', 'member'] as const) {
      if (link[from] !== end) continue
      const { toEnd, fromColumn, toColumn } = ends({ link, from })
      const others: Named[] = await adb
        .selectFrom(`${link.table} as l`)
        .innerJoin(`${END_TABLES[toEnd]} as o`, 'o.id', `l.${toColumn}`)
        .select(['o.id as id', 'o.name as name'])
        .where('l.tenant_id', '=', tenantId)
        .where(`l.${fromColumn}`, '=', record.id)
        .orderBy('o.id')
        .execute()
      if (others.length === 0) continue
      await adb.deleteFrom(link.table).where('tenant_id', '=', tenantId).where(fromColumn, '=', record.id).execute()
      const metadata = { reason: `${end}.deleted` }
      for (const other of others) {
        entries.push(
          from === 'owner'
            ? linkAudit(link, 'unlinked', record, other, { metadata })
            : linkAudit(link, 'unlinked', other, record, { metadata }),
        )
      }
    }
  }
  return entries
}
