import type { TeamRow, UserRow } from '../../db/tables.js'
import { type CatalogSpec, createCatalogService } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { refuseWhileOwning } from '../../shared/governed.js'
import type { AuditEntry, Tx } from '../../shared/mutation.js'
import { emailKey, fromFlag, presentFields, toFlag } from '../../shared/records.js'
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

export const userCatalog: CatalogSpec<UserRow, User, UserCreate, UserUpdate, UserListQuery> = {
  table: 'users',
  label: 'user',
  resourceType: 'user',
  idPrefix: 'usr',
  sortColumns: { email: 'email_key', created_at: 'created_at', updated_at: 'updated_at' },
  searchColumns: ['email_key', 'name_key'],
  uniqueField: 'email',
  uniqueValue: (input) => input.email,
  audited: ['email', 'name', 'title', 'active', 'role'],
  create: (input, ctx) => ({
    ...emailColumns(input.email),
    ...nameColumns(input.name ?? null),
    title: input.title ?? null,
    active: toFlag(input.active ?? true),
    role: roleSetBy(ctx, input.role) ?? 'read',
  }),
  update: (input, _current, _tx, ctx) => ({
    ...presentFields(input, ['title']),
    ...(input.email !== undefined && emailColumns(input.email)),
    ...(input.name !== undefined && nameColumns(input.name)),
    ...(input.active !== undefined && { active: toFlag(input.active ?? true) }),
    ...(input.role !== undefined && { role: roleSetBy(ctx, input.role) ?? 'read' }),
  }),
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
  toItem: (row) => ({
    id: row.id,
    email: row.email,
    name: row.name,
    title: row.title,
    active: fromFlag(row.active),
    role: row.role as Role,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }),
}

export function createUsersService(deps: Pick<Deps, 'database'>) {
  return createCatalogService(deps.database, userCatalog)
}
