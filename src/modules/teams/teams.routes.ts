import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import { User, UserPage } from '../users/users.schemas.js'
import {
  Team,
  TeamCreate,
  TeamListQuery,
  TeamMemberBody,
  TeamMemberListQuery,
  TeamMemberParams,
  TeamPage,
  TeamUpdate,
} from './teams.schemas.js'
import type { TeamsService } from './teams.service.js'

const tags = ['teams']

export function teamRoutes(teams: TeamsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/teams',
      {
        schema: {
          operationId: 'listTeams',
          summary: 'List teams',
          tags,
          querystring: TeamListQuery,
          response: { 200: TeamPage },
        },
      },
      async (req) => teams.list(req.ctx, req.query),
    )

    app.get(
      '/teams/:id',
      {
        schema: {
          operationId: 'getTeam',
          summary: 'Get a team',
          tags,
          params: IdParam('team'),
          response: { 200: Team },
        },
      },
      async (req) => teams.get(req.ctx, req.params.id),
    )

    app.post(
      '/teams',
      {
        schema: {
          operationId: 'createTeam',
          summary: 'Create a team',
          tags,
          body: TeamCreate,
          response: { 201: Team },
        },
      },
      async (req, reply) => created(req, reply, await teams.create(req.ctx, req.body)),
    )

    app.patch(
      '/teams/:id',
      {
        schema: {
          operationId: 'updateTeam',
          summary: 'Update a team',
          description: '`null` clears a field; absent fields stay as they are.',
          tags,
          params: IdParam('team'),
          body: TeamUpdate,
          response: { 200: Team },
        },
      },
      async (req) => teams.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/teams/:id',
      {
        schema: {
          operationId: 'deleteTeam',
          summary: 'Delete a team',
          description: '409 while the team owns a record or is assigned a control; its memberships go with it.',
          tags,
          params: IdParam('team'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, teams.delete(req.ctx, req.params.id)),
    )

    app.get(
      '/teams/:id/members',
      {
        schema: {
          operationId: 'listTeamMembers',
          summary: "List a team's members",
          tags,
          params: IdParam('team'),
          querystring: TeamMemberListQuery,
          response: { 200: UserPage },
        },
      },
      async (req) => teams.listMembers(req.ctx, req.params.id, req.query),
    )

    app.post(
      '/teams/:id/members',
      {
        schema: {
          operationId: 'addTeamMember',
          summary: 'Add a user to a team',
          description:
            'Adds once: 201 with the user when new, 200 when already a member. A missing or other-tenant id is 404.',
          tags,
          params: IdParam('team'),
          body: TeamMemberBody,
          response: { 200: User, 201: User },
        },
      },
      async (req, reply) => {
        const added = await teams.addMember(req.ctx, req.params.id, req.body.user_id)
        return added.created ? created(req, reply, added.record) : added.record
      },
    )

    app.delete(
      '/teams/:id/members/:user_id',
      {
        schema: {
          operationId: 'removeTeamMember',
          summary: 'Remove a user from a team',
          tags,
          params: TeamMemberParams,
          response: { 204: Type.Null({ description: 'Removed.' }) },
        },
      },
      async (req, reply) => noContent(reply, teams.removeMember(req.ctx, req.params.id, req.params.user_id)),
    )
  }
}
