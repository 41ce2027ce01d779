import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, jsonText, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import { Vendor, VendorCreate, VendorListQuery, VendorPage, VendorUpdate } from './vendors.schemas.js'
import type { VendorsService } from './vendors.service.js'

const tags = ['vendors']

export function vendorRoutes(vendors: VendorsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/vendors',
      {
        schema: {
          operationId: 'listVendors',
          summary: 'List vendors',
          tags,
          querystring: VendorListQuery,
          response: { 200: VendorPage },
        },
      },
      async (req, reply) => jsonText(reply, await vendors.listJson(req.ctx, req.query, req.readAt)),
    )

    app.get(
      '/vendors/:id',
      {
        schema: {
          operationId: 'getVendor',
          summary: 'Get a vendor',
          tags,
          params: IdParam('vnd'),
          response: { 200: Vendor },
        },
      },
      async (req, reply) => jsonText(reply, await vendors.getJson(req.ctx, req.params.id, req.readAt)),
    )

    app.post(
      '/vendors',
      {
        schema: {
          operationId: 'createVendor',
          summary: 'Create a vendor',
          tags,
          body: VendorCreate,
          response: { 201: Vendor },
        },
      },
      async (req, reply) => created(req, reply, await vendors.create(req.ctx, req.body)),
    )

    app.patch(
      '/vendors/:id',
      {
        schema: {
          operationId: 'updateVendor',
          summary: 'Update a vendor',
          description: '`null` clears a field (`status` returns to `active`); absent fields stay as they are.',
          tags,
          params: IdParam('vnd'),
          body: VendorUpdate,
          response: { 200: Vendor },
        },
      },
      async (req) => vendors.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/vendors/:id',
      {
        schema: {
          operationId: 'deleteVendor',
          summary: 'Delete a vendor',
          description: 'Also removes its links to use cases and models (each removal is audited).',
          tags,
          params: IdParam('vnd'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, vendors.delete(req.ctx, req.params.id)),
    )
  }
}
