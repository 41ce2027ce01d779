import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import {
  CustomField,
  CustomFieldCreate,
  CustomFieldListQuery,
  CustomFieldPage,
  CustomFieldUpdate,
} from './custom-fields.schemas.js'
import type { CustomFieldsService } from './custom-fields.service.js'

const tags = ['custom fields']
// A definition changes every integration's records of the tenant (a required field refuses their creates): an admin's act.
const admin = { role: 'admin' as const }

export function customFieldRoutes(customFields: CustomFieldsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/custom_fields',
      {
        schema: {
          operationId: 'listCustomFields',
          summary: 'List custom fields',
          tags,
          querystring: CustomFieldListQuery,
          response: { 200: CustomFieldPage },
        },
      },
      async (req) => customFields.list(req.ctx, req.query),
    )

    app.get(
      '/custom_fields/:id',
      {
        schema: {
          operationId: 'getCustomField',
          summary: 'Get a custom field',
          tags,
          params: IdParam('cf'),
          response: { 200: CustomField },
        },
      },
      async (req) => customFields.get(req.ctx, req.params.id),
    )

    app.post(
      '/custom_fields',
      {
        config: admin,
        schema: {
          operationId: 'createCustomField',
          summary: 'Create a custom field (admin)',
          description:
            "Defining fields changes the tenant's records for every integration, so it takes an admin key (403 for read and write keys); reading them does not. Use cases, models and vendors then carry its values in `custom_fields: [{custom_field_id, value}]`.",
          tags,
          body: CustomFieldCreate,
          response: { 201: CustomField },
        },
      },
      async (req, reply) => created(req, reply, await customFields.create(req.ctx, req.body)),
    )

    app.patch(
      '/custom_fields/:id',
      {
        config: admin,
        schema: {
          operationId: 'updateCustomField',
          summary: 'Update or archive a custom field (admin)',
          description:
            'An admin key (403 for read and write keys). `null` clears a field; absent fields stay as they are. `type` and `multiple` change only while no record carries a value (409).',
          tags,
          params: IdParam('cf'),
          body: CustomFieldUpdate,
          response: { 200: CustomField },
        },
      },
      async (req) => customFields.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/custom_fields/:id',
      {
        config: admin,
        schema: {
          operationId: 'deleteCustomField',
          summary: 'Delete a custom field (admin)',
          description:
            'An admin key (403 for read and write keys). 409 while any record carries a value: archive it instead.',
          tags,
          params: IdParam('cf'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, customFields.delete(req.ctx, req.params.id)),
    )
  }
}
