import type { TeamRow, UserRow } from '../../db/tables.js'
import { type CatalogSpec, createCatalogService } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { refuseWhileOwning } from '../../shared/governed.js'
import type { AuditEntry, Tx } from '../../shared/mutation.js'
import { derive, flag, ID, plain, TIME } from '../../shared/fields.js'
import { emailKey, fromFlag, toFlag } from '../../shared/records.js'
import { nameKey } from '../../shared/search.js'
import type { User, UserCreate, UserListQuery, UserUpdate } from './users.schemas.js'
import { AppError } from '../../http/errors.js'
import type { Ctx, Role } from '../../shared/context.js'
import { endSessionsOf } from '../sessions/sessions.service.js'

/** A person's role is an admin's to give: a write key could otherwise make someone (itself, signed in) an admin. */
function roleSetBy(ctx: Ctx, role: Role | null | undefined): Role | null | undefined {
  if (role !== undefined && ctx.role !== 'admin')
    throw new AppError('forbidden', "only an admin sets a user's role", [{ field: 'role', message: 'needs admin' }], {
      role: ctx.role,
      required_role: 'admin',
    })
  return role
}

export type UsersService = ReturnType<typeof createUsersService>

const emailColumns = (email: string) => ({ email: email.trim(), email_key: emailKey(email) })
const nameColumns = (name: string | null) => ({
  name: name === null ? null : name.trim(),
  name_key: name === null ? null : nameKey(name),
})

/** A membership change, told on the team's audit trail. */
export const memberAudit = (
  action: string,
  team: Pick<TeamRow, 'id' | 'name'>,
  user: Pick<UserRow, 'id' | 'email'>,
): AuditEntry => ({
  action: `team.${action}`,
  resourceType: 'team',
  resourceId: team.id,
  resourceName: team.name,
  subObjectType: 'user',
  subObjectId: user.id,
  subObjectName: user.email,
})

/**
 * Removes every membership of a team or user being deleted (a plain association), each removal audited
 * on its team's trail with the reason.
 */
export async function removeMemberships(
  tx: Tx,
  tenantId: string,
  side: 'team' | 'user',
  id: string,
): Promise<AuditEntry[]> {
  const memberships = await tx
    .selectFrom('team_members as m')
    .innerJoin('teams as t', (join) => join.onRef('t.id', '=', 'm.team_id').onRef('t.tenant_id', '=', 'm.tenant_id'))
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'm.user_id').onRef('u.tenant_id', '=', 'm.tenant_id'))
    .select(['t.id as team_id', 't.name as team_name', 'u.id as user_id', 'u.email as email'])
    .where('m.tenant_id', '=', tenantId)
    .where(side === 'team' ? 'm.team_id' : 'm.user_id', '=', id)
    .orderBy('t.id')
    .orderBy('u.id')
    .execute()
  await tx
    .deleteFrom('team_members')
    .where('tenant_id', '=', tenantId)
    .where(side === 'team' ? 'team_id' : 'user_id', '=', id)
    .execute()
  return memberships.map((m) => ({
    ...memberAudit('member_removed', { id: m.team_id, name: m.team_name }, { id: m.user_id, email: m.email }),
    metadata: { reason: `${side}.deleted` },
  }))
}

const fields = derive<UserRow, User, UserCreate, UserUpdate>({
  id: ID,
  email: (key) => ({
    read: (row) => row[key],
    create: (value) => emailColumns(value as string),
    update: (value) => emailColumns(value as string),
    audited: true,
    listed: true,
  }),
  name: (key) => ({
    read: (row) => row[key],
    create: (value) => nameColumns((value as string | undefined) ?? null),
    update: (value) => nameColumns(value as string | null),
    audited: true,
    listed: true,
  }),
  title: plain(),
  active: flag({ default: true, listed: true }),
  role: (key) => ({
    read: (row) => row[key],
    create: (value, ctx) => ({ role: roleSetBy(ctx, value as Role | undefined) ?? 'read' }),
    update: (value, ctx) => ({ role: roleSetBy(ctx, value as Role | null) ?? 'read' }),
    audited: true,
    listed: true,
  }),
  created_at: TIME,
  updated_at: TIME,
})

export const userCatalog: CatalogSpec<UserRow, User, UserCreate, UserUpdate, UserListQuery> = {
  table: 'users',
  label: 'user',
  resourceType: 'user',
  idPrefix: 'usr',
  sortColumns: { email: 'email_key', created_at: 'created_at', updated_at: 'updated_at' },
  searchColumns: ['email_key', 'name_key'],
  uniqueField: 'email',
  uniqueValue: (input) => input.email,
  // Rendered in JavaScript only: the spec takes the declaration's writes and item, not its SQL rendering.
  audited: fields.audited,
  create: fields.create,
  update: fields.update,
  toItem: fields.toItem,
  /** A deactivated person is signed out everywhere at once (a reactivation does not bring old sessions back). */
  afterWrite: async (tx, ctx, row) =>
    fromFlag(row.active) ? [] : endSessionsOf(tx, ctx.tenantId, row.id, 'user.deactivated'),
  filter: (q, query) => {
    let out = q
    if (query.email !== undefined) out = out.where('email_key', '=', emailKey(query.email))
    if (query.active !== undefined) out = out.where('active', '=', toFlag(query.active))
    if (query.role !== undefined) out = out.where('role', '=', query.role)
    return out
  },
  /** Refused while the user owns or is assigned anything; team memberships go with the user. */
  beforeDelete: async (tx, ctx, row) => {
    await refuseWhileOwning(tx, ctx.tenantId, 'user', row.id)
    return removeMemberships(tx, ctx.tenantId, 'user', row.id)
  },
}

export function createUsersService(deps: Pick<Deps, 'database'>) {
  return createCatalogService(deps.database, userCatalog)
}
