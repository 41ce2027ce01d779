import type { TeamRow, UserRow } from '../../db/tables.js'
import { AppError, notFound } from '../../http/errors.js'
import { type CatalogSpec, createCatalogService, NAMED } from '../../shared/catalog.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { refuseWhileOwning } from '../../shared/governed.js'
import { now } from '../../shared/ids.js'
import { runMutation, type Tx } from '../../shared/mutation.js'
import { applyKeyset, keyset, type Page, toPage } from '../../shared/pagination.js'
import { derive, ID, name, plain, TIME } from '../../shared/fields.js'
import type { User } from '../users/users.schemas.js'
import { memberAudit, removeMemberships, userCatalog } from '../users/users.service.js'
import type { Team, TeamCreate, TeamListQuery, TeamMemberListQuery, TeamUpdate } from './teams.schemas.js'

export type TeamsService = ReturnType<typeof createTeamsService>

export const teamCatalog: CatalogSpec<TeamRow, Team, TeamCreate, TeamUpdate, TeamListQuery> = {
  table: 'teams',
  label: 'team',
  resourceType: 'team',
  idPrefix: 'team',
  ...NAMED,
  ...derive<TeamRow, Team, TeamCreate, TeamUpdate>({
    id: ID,
    name,
    description: plain(),
    created_at: TIME,
    updated_at: TIME,
  }),
  filter: (q, query) =>
    query.member_id === undefined
      ? q
      : q.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('team_members')
              .select('team_members.team_id')
              .whereRef('team_members.tenant_id', '=', 'teams.tenant_id')
              .whereRef('team_members.team_id', '=', 'teams.id')
              .where('team_members.user_id', '=', query.member_id as string),
          ),
        ),
  /** Refused while the team owns or is assigned anything; its memberships go with it. */
  beforeDelete: async (tx, ctx, row) => {
    await refuseWhileOwning(tx, ctx.tenantId, 'team', row.id)
    return removeMemberships(tx, ctx.tenantId, 'team', row.id)
  },
}

export function createTeamsService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  const findTeam = async (conn: Tx, ctx: Ctx, id: string): Promise<TeamRow> => {
    const team = await conn
      .selectFrom('teams')
      .selectAll()
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
    if (!team) throw notFound('team', id)
    return team
  }
  const findUser = async (conn: Tx, ctx: Ctx, id: string): Promise<UserRow> => {
    const user = await conn
      .selectFrom('users')
      .selectAll()
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
    if (!user) throw notFound('user', id)
    return user
  }

  return {
    ...createCatalogService(database, teamCatalog),

    async listMembers(ctx: Ctx, id: string, query: TeamMemberListQuery): Promise<Page<User>> {
      await findTeam(db, ctx, id)
      const ks = keyset(query)
      const q = db
        .selectFrom('users')
        .selectAll()
        .where('tenant_id', '=', ctx.tenantId)
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('team_members')
            .select('user_id')
            .where('tenant_id', '=', ctx.tenantId)
            .where('team_id', '=', id),
        )
      return toPage(await applyKeyset(q, ks).execute(), ks, userCatalog.toItem)
    },

    /** Adds once: `created` says whether this request made the membership (201) or found it (200). */
    async addMember(ctx: Ctx, id: string, userId: string): Promise<{ record: User; created: boolean }> {
      return runMutation<{ record: User; created: boolean }>(database, ctx, async (tx) => {
        const team = await findTeam(tx, ctx, id)
        const user = await findUser(tx, ctx, userId)
        const existing = await tx
          .selectFrom('team_members')
          .select('user_id')
          .where('tenant_id', '=', ctx.tenantId)
          .where('team_id', '=', id)
          .where('user_id', '=', userId)
          .executeTakeFirst()
        if (existing) return { result: { record: userCatalog.toItem(user), created: false }, audit: [] }
        await tx
          .insertInto('team_members')
          .values({ tenant_id: ctx.tenantId, team_id: id, user_id: userId, created_at: now() })
          .execute()
        return {
          result: { record: userCatalog.toItem(user), created: true },
          audit: memberAudit('member_added', team, user),
        }
      })
    },

    async removeMember(ctx: Ctx, id: string, userId: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const team = await findTeam(tx, ctx, id)
        const user = await findUser(tx, ctx, userId)
        const removed = await tx
          .deleteFrom('team_members')
          .where('tenant_id', '=', ctx.tenantId)
          .where('team_id', '=', id)
          .where('user_id', '=', userId)
          .executeTakeFirst()
        if (Number(removed.numDeletedRows) === 0)
          throw new AppError('not_found', `user ${userId} is not a member of team ${id}`)
        return { result: undefined, audit: memberAudit('member_removed', team, user) }
      })
    },
  }
}
