import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { created } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import { Model, ModelPage } from '../models/models.schemas.js'
import { UseCasePage } from '../use-cases/use-cases.schemas.js'
import { Vendor, VendorPage } from '../vendors/vendors.schemas.js'
import {
  LinkBody,
  LinkListQuery,
  ModelVendorParams,
  RiskScenarioLinkBody,
  UseCaseModelParams,
  UseCaseRiskScenario,
  UseCaseRiskScenarioPage,
  UseCaseRiskScenarioParams,
  UseCaseVendorParams,
} from './relationships.schemas.js'
import type { Linked, RelationshipsService } from './relationships.service.js'

const unlinked = Type.Null({ description: 'Unlinked.' })
const linkNote =
  'Links once: 201 with the linked record when the link is new, 200 with the same body when it already existed. A missing or other-tenant id on either side is 404.'

/** 201 + Location for a new link, 200 for one that already existed. */
function linkReply<T extends { id: string }>(req: FastifyRequest, reply: FastifyReply, linked: Linked<T>): T {
  return linked.created ? created(req, reply, linked.record) : linked.record
}

/** The plain associations between use cases, models, vendors and risk scenarios, listed from either side. */
export function relationshipRoutes(relationships: RelationshipsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    const noContent = async (reply: FastifyReply) => reply.code(204).send(null)

    // use case ↔ models
    app.get(
      '/use_cases/:id/models',
      {
        schema: {
          operationId: 'listUseCaseModels',
          summary: 'List the models linked to a use case',
          tags: ['use cases'],
          params: IdParam('uc'),
          querystring: LinkListQuery,
          response: { 200: ModelPage },
        },
      },
      async (req) => relationships.listUseCaseModels(req.ctx, req.params.id, req.query),
    )

    app.post(
      '/use_cases/:id/models',
      {
        schema: {
          operationId: 'linkUseCaseModel',
          summary: 'Link a model to a use case',
          description: linkNote,
          tags: ['use cases'],
          params: IdParam('uc'),
          body: LinkBody,
          response: { 200: Model, 201: Model },
        },
      },
      async (req, reply) =>
        linkReply(req, reply, await relationships.linkUseCaseModel(req.ctx, req.params.id, req.body.id)),
    )

    app.delete(
      '/use_cases/:id/models/:model_id',
      {
        schema: {
          operationId: 'unlinkUseCaseModel',
          summary: 'Unlink a model from a use case',
          tags: ['use cases'],
          params: UseCaseModelParams,
          response: { 204: unlinked },
        },
      },
      async (req, reply) => {
        await relationships.unlink(req.ctx, 'use_case_models', req.params.id, req.params.model_id)
        return noContent(reply)
      },
    )

    // use case ↔ vendors
    app.get(
      '/use_cases/:id/vendors',
      {
        schema: {
          operationId: 'listUseCaseVendors',
          summary: 'List the vendors linked to a use case',
          tags: ['use cases'],
          params: IdParam('uc'),
          querystring: LinkListQuery,
          response: { 200: VendorPage },
        },
      },
      async (req) => relationships.listUseCaseVendors(req.ctx, req.params.id, req.query),
    )

    app.post(
      '/use_cases/:id/vendors',
      {
        schema: {
          operationId: 'linkUseCaseVendor',
          summary: 'Link a vendor to a use case',
          description: linkNote,
          tags: ['use cases'],
          params: IdParam('uc'),
          body: LinkBody,
          response: { 200: Vendor, 201: Vendor },
        },
      },
      async (req, reply) =>
        linkReply(req, reply, await relationships.linkUseCaseVendor(req.ctx, req.params.id, req.body.id)),
    )

    app.delete(
      '/use_cases/:id/vendors/:vendor_id',
      {
        schema: {
          operationId: 'unlinkUseCaseVendor',
          summary: 'Unlink a vendor from a use case',
          tags: ['use cases'],
          params: UseCaseVendorParams,
          response: { 204: unlinked },
        },
      },
      async (req, reply) => {
        await relationships.unlink(req.ctx, 'use_case_vendors', req.params.id, req.params.vendor_id)
        return noContent(reply)
      },
    )

    // use case ↔ risk scenarios (with the use case's likelihood and impact)
    app.get(
      '/use_cases/:id/risk_scenarios',
      {
        schema: {
          operationId: 'listUseCaseRiskScenarios',
          summary: 'List the risk scenarios linked to a use case, with likelihood and impact',
          tags: ['use cases'],
          params: IdParam('uc'),
          querystring: LinkListQuery,
          response: { 200: UseCaseRiskScenarioPage },
        },
      },
      async (req) => relationships.listUseCaseRiskScenarios(req.ctx, req.params.id, req.query),
    )

    app.post(
      '/use_cases/:id/risk_scenarios',
      {
        schema: {
          operationId: 'linkUseCaseRiskScenario',
          summary: 'Link a risk scenario to a use case',
          description: `${linkNote} Relinking updates the likelihood and impact it sends (\`null\` clears) and keeps those it leaves out.`,
          tags: ['use cases'],
          params: IdParam('uc'),
          body: RiskScenarioLinkBody,
          response: { 200: UseCaseRiskScenario, 201: UseCaseRiskScenario },
        },
      },
      async (req, reply) =>
        linkReply(req, reply, await relationships.linkUseCaseRiskScenario(req.ctx, req.params.id, req.body)),
    )

    app.delete(
      '/use_cases/:id/risk_scenarios/:risk_scenario_id',
      {
        schema: {
          operationId: 'unlinkUseCaseRiskScenario',
          summary: 'Unlink a risk scenario from a use case',
          tags: ['use cases'],
          params: UseCaseRiskScenarioParams,
          response: { 204: unlinked },
        },
      },
      async (req, reply) => {
        await relationships.unlink(req.ctx, 'use_case_risk_scenarios', req.params.id, req.params.risk_scenario_id)
        return noContent(reply)
      },
    )

    // model ↔ vendors
    app.get(
      '/models/:id/vendors',
      {
        schema: {
          operationId: 'listModelVendors',
          summary: 'List the vendors linked to a model',
          tags: ['models'],
          params: IdParam('mdl'),
          querystring: LinkListQuery,
          response: { 200: VendorPage },
        },
      },
      async (req) => relationships.listModelVendors(req.ctx, req.params.id, req.query),
    )

    app.post(
      '/models/:id/vendors',
      {
        schema: {
          operationId: 'linkModelVendor',
          summary: 'Link a vendor to a model',
          description: linkNote,
          tags: ['models'],
          params: IdParam('mdl'),
          body: LinkBody,
          response: { 200: Vendor, 201: Vendor },
        },
      },
      async (req, reply) =>
        linkReply(req, reply, await relationships.linkModelVendor(req.ctx, req.params.id, req.body.id)),
    )

    app.delete(
      '/models/:id/vendors/:vendor_id',
      {
        schema: {
          operationId: 'unlinkModelVendor',
          summary: 'Unlink a vendor from a model',
          tags: ['models'],
          params: ModelVendorParams,
          response: { 204: unlinked },
        },
      },
      async (req, reply) => {
        await relationships.unlink(req.ctx, 'model_vendors', req.params.id, req.params.vendor_id)
        return noContent(reply)
      },
    )

    // vendor → use cases, models (read-only from this side)
    app.get(
      '/vendors/:id/use_cases',
      {
        schema: {
          operationId: 'listVendorUseCases',
          summary: 'List the use cases a vendor is linked to',
          tags: ['vendors'],
          params: IdParam('vnd'),
          querystring: LinkListQuery,
          response: { 200: UseCasePage },
        },
      },
      async (req) => relationships.listVendorUseCases(req.ctx, req.params.id, req.query),
    )

    app.get(
      '/vendors/:id/models',
      {
        schema: {
          operationId: 'listVendorModels',
          summary: 'List the models a vendor is linked to',
          tags: ['vendors'],
          params: IdParam('vnd'),
          querystring: LinkListQuery,
          response: { 200: ModelPage },
        },
      },
      async (req) => relationships.listVendorModels(req.ctx, req.params.id, req.query),
    )
  }
}
