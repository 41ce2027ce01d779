import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import { User, UserCreate, UserListQuery, UserPage, UserUpdate } from './users.schemas.js'
import type { UsersService } from './users.service.js'

const tags = ['users']

export function userRoutes(users: UsersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/users',
      {
        schema: {
          operationId: 'listUsers',
          summary: 'List users',
          tags,
          querystring: UserListQuery,
          response: { 200: UserPage },
        },
      },
      async (req) => users.list(req.ctx, req.query),
    )

    app.get(
      '/users/:id',
      {
        schema: {
          operationId: 'getUser',
          summary: 'Get a user',
          tags,
          params: IdParam('usr'),
          response: { 200: User },
        },
      },
      async (req) => users.get(req.ctx, req.params.id),
    )

    app.post(
      '/users',
      {
        schema: {
          operationId: 'createUser',
          summary: 'Create a user',
          description:
            'A directory entry for accountability (owners, assignees), not a login: API keys stay the way in.',
          tags,
          body: UserCreate,
          response: { 201: User },
        },
      },
      async (req, reply) => created(req, reply, await users.create(req.ctx, req.body)),
    )

    app.patch(
      '/users/:id',
      {
        schema: {
          operationId: 'updateUser',
          summary: 'Update a user',
          description:
            '`null` clears a field (`active` returns to true); absent fields stay as they are. Deactivate (`active: false`) to keep history.',
          tags,
          params: IdParam('usr'),
          body: UserUpdate,
          response: { 200: User },
        },
      },
      async (req) => users.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/users/:id',
      {
        schema: {
          operationId: 'deleteUser',
          summary: 'Delete a user',
          description:
            '409 while the user owns a record, is assigned a control or is a custom field value; team memberships go with the user.',
          tags,
          params: IdParam('usr'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, users.delete(req.ctx, req.params.id)),
    )
  }
}
