import type { Kysely } from 'kysely'
import type { LoginLinkRow, SessionRow, Tables } from '../../db/tables.js'
import type { AuditEntry, Tx } from '../../shared/mutation.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'

/** A session with the person behind it, as every request signed in with it needs them. */
export interface SessionWithUser {
  id: string
  tenant_id: string
  user_id: string
  last_seen_at: string
  expires_at: string
  email: string
  name: string | null
  role: string
  active: number
}

export function findSessionByHash(db: Kysely<Tables>, tokenHash: string): Promise<SessionWithUser | undefined> {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 's.user_id').onRef('u.tenant_id', '=', 's.tenant_id'))
    .select([
      's.id',
      's.tenant_id',
      's.user_id',
      's.last_seen_at',
      's.expires_at',
      'u.email',
      'u.name',
      'u.role',
      'u.active',
    ])
    .where('s.token_hash', '=', tokenHash)
    .executeTakeFirst()
}

export async function touchSession(db: Kysely<Tables>, tenantId: string, id: string, at: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_seen_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute()
}

export async function insertSession(tx: Tx, row: SessionRow): Promise<void> {
  await tx.insertInto('sessions').values(row).execute()
}

/** The user's sessions past their ends, and all but the newest `keep - 1`, so that one more fits in `keep`. */
export async function pruneSessions(
  tx: Tx,
  tenantId: string,
  userId: string,
  keep: number,
  idleCutoff: string,
  at: string,
): Promise<void> {
  await tx
    .deleteFrom('sessions')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('expires_at', '<=', at), eb('last_seen_at', '<=', idleCutoff)]))
    .execute()
  const kept = await tx
    .selectFrom('sessions')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .limit(keep - 1)
    .execute()
  if (kept.length < keep - 1) return
  await tx
    .deleteFrom('sessions')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '<', kept[kept.length - 1].id)
    .execute()
}

export function findSession(db: Kysely<Tables>, tenantId: string, id: string) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 's.user_id').onRef('u.tenant_id', '=', 's.tenant_id'))
    .select(['s.id', 's.user_id', 'u.email', 'u.name'])
    .where('s.tenant_id', '=', tenantId)
    .where('s.id', '=', id)
    .executeTakeFirst()
}

export async function deleteSession(db: Kysely<Tables>, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('sessions')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** The tenant's sessions still within both their timeouts (people's names come with usersById). */
export function listSessions(
  db: Kysely<Tables>,
  tenantId: string,
  ks: Keyset,
  filter: { userId?: string; idleCutoff: string; at: string },
) {
  let q = db
    .selectFrom('sessions')
    .select(['id', 'user_id', 'method', 'address', 'user_agent', 'created_at', 'last_seen_at', 'expires_at'])
    .where('tenant_id', '=', tenantId)
    .where('expires_at', '>', filter.at)
    .where('last_seen_at', '>', filter.idleCutoff)
  if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId)
  return applyKeyset(q, ks).execute()
}

export async function usersById(db: Kysely<Tables>, tenantId: string, ids: string[]) {
  if (ids.length === 0) return new Map<string, { id: string; email: string; name: string | null }>()
  const rows = await db
    .selectFrom('users')
    .select(['id', 'email', 'name'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', [...new Set(ids)])
    .execute()
  return new Map(rows.map((r) => [r.id, r]))
}

/** Ends every session of a user (deactivated, deleted, or signed out everywhere), each ending audited with the reason. */
export async function endSessionsOf(tx: Tx, tenantId: string, userId: string, reason: string): Promise<AuditEntry[]> {
  const ended = await tx
    .deleteFrom('sessions')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .returning(['id'])
    .execute()
  return ended.map(({ id }) => ({
    action: 'session.ended',
    resourceType: 'session',
    resourceId: id,
    subObjectType: 'user',
    subObjectId: userId,
    metadata: { reason },
  }))
}

export async function insertLoginLink(tx: Tx, row: LoginLinkRow): Promise<void> {
  await tx
    .deleteFrom('login_links')
    .where('tenant_id', '=', row.tenant_id)
    .where('expires_at', '<=', row.created_at)
    .execute()
  await tx.insertInto('login_links').values(row).execute()
}

/** Marks an unused, unexpired link used and returns it; a second use (or a race for the first) finds nothing. */
export async function consumeLoginLink(tx: Tx, tokenHash: string, at: string): Promise<LoginLinkRow | undefined> {
  return tx
    .updateTable('login_links')
    .set({ used_at: at })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .returningAll()
    .executeTakeFirst()
}

export function findLoginLink(db: Kysely<Tables>, tokenHash: string): Promise<LoginLinkRow | undefined> {
  return db.selectFrom('login_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
}
