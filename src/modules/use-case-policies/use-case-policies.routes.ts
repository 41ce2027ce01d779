import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import {
  AppliedPolicyPack,
  AppliedPolicyPackPage,
  ApplyPolicyPack,
  ControlEvidence,
  ControlEvidenceLink,
  ControlEvidencePage,
  ControlEvidenceParams,
  TenantControlListQuery,
  TenantControlPage,
  UseCaseControl,
  UseCaseControlListQuery,
  UseCaseControlPage,
  UseCaseControlParams,
  UseCaseControlUpdate,
  UseCasePackParams,
  UseCasePageQuery,
} from './use-case-policies.schemas.js'
import type { UseCasePoliciesService } from './use-case-policies.service.js'

const tags = ['use case policies']

export function useCasePolicyRoutes(policies: UseCasePoliciesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/use_cases/:id/policy_packs',
      {
        schema: {
          operationId: 'listUseCasePolicyPacks',
          summary: 'List the policy packs applied to a use case',
          tags,
          params: IdParam('uc'),
          querystring: UseCasePageQuery,
          response: { 200: AppliedPolicyPackPage },
        },
      },
      async (req) => policies.listPacks(req.ctx, req.params.id, req.query),
    )

    app.get(
      '/use_cases/:id/policy_packs/:key',
      {
        schema: {
          operationId: 'getUseCasePolicyPack',
          summary: 'Get a policy pack applied to a use case',
          tags,
          params: UseCasePackParams,
          response: { 200: AppliedPolicyPack },
        },
      },
      async (req) => policies.getPack(req.ctx, req.params.id, req.params.key),
    )

    app.post(
      '/use_cases/:id/policy_packs',
      {
        schema: {
          operationId: 'applyPolicyPack',
          summary: 'Apply a policy pack to a use case',
          tags,
          params: IdParam('uc'),
          body: ApplyPolicyPack,
          response: { 201: AppliedPolicyPack },
        },
      },
      async (req, reply) => {
        const applied = await policies.applyPack(req.ctx, req.params.id, req.body)
        return created(req, reply, applied, `${req.url.split('?')[0]}/${encodeURIComponent(applied.key)}`)
      },
    )

    app.delete(
      '/use_cases/:id/policy_packs/:key',
      {
        schema: {
          operationId: 'removePolicyPack',
          summary: 'Remove a policy pack from a use case',
          description: 'Its controls go too, except those another applied pack still needs.',
          tags,
          params: UseCasePackParams,
          response: { 204: Type.Null({ description: 'Removed.' }) },
        },
      },
      async (req, reply) => noContent(reply, policies.removePack(req.ctx, req.params.id, req.params.key)),
    )

    app.get(
      '/use_cases/:id/controls',
      {
        schema: {
          operationId: 'listUseCaseControls',
          summary: 'List the controls of a use case',
          tags,
          params: IdParam('uc'),
          querystring: UseCaseControlListQuery,
          response: { 200: UseCaseControlPage },
        },
      },
      async (req) => policies.listControls(req.ctx, req.params.id, req.query),
    )

    app.get(
      '/use_case_controls',
      {
        schema: {
          operationId: 'listTenantControls',
          summary: "List the tenant's use-case controls",
          description:
            "Every use case's controls in one list, for work queues: what is assigned to a user or team, what is open or overdue.",
          tags,
          querystring: TenantControlListQuery,
          response: { 200: TenantControlPage },
        },
        config: { readCache: { daily: (query) => (query as TenantControlListQuery).overdue !== undefined } },
      },
      async (req) => policies.listTenantControls(req.ctx, req.query),
    )

    app.get(
      '/use_cases/:id/controls/:control_id',
      {
        schema: {
          operationId: 'getUseCaseControl',
          summary: 'Get a control of a use case',
          tags,
          params: UseCaseControlParams,
          response: { 200: UseCaseControl },
        },
      },
      async (req) => policies.getControl(req.ctx, req.params.id, req.params.control_id),
    )

    app.patch(
      '/use_cases/:id/controls/:control_id',
      {
        schema: {
          operationId: 'updateUseCaseControl',
          summary: 'Update the status, notes or due date of a use-case control',
          tags,
          params: UseCaseControlParams,
          body: UseCaseControlUpdate,
          response: { 200: UseCaseControl },
        },
      },
      async (req) => policies.updateControl(req.ctx, req.params.id, req.params.control_id, req.body),
    )

    app.get(
      '/use_cases/:id/controls/:control_id/evidence',
      {
        schema: {
          operationId: 'listControlEvidence',
          summary: 'List the evidence linked to a control of a use case',
          tags,
          params: UseCaseControlParams,
          querystring: UseCasePageQuery,
          response: { 200: ControlEvidencePage },
        },
      },
      async (req) => policies.listControlEvidence(req.ctx, req.params.id, req.params.control_id),
    )

    app.post(
      '/use_cases/:id/controls/:control_id/evidence',
      {
        schema: {
          operationId: 'linkControlEvidence',
          summary: 'Link evidence to a control of a use case',
          description:
            'Idempotent: linking the same evidence again answers 200 and changes nothing (or only `requirement`).',
          tags,
          params: UseCaseControlParams,
          body: ControlEvidenceLink,
          response: { 200: ControlEvidence, 201: ControlEvidence },
        },
      },
      async (req, reply) => {
        const { link, created: isNew } = await policies.linkEvidence(
          req.ctx,
          req.params.id,
          req.params.control_id,
          req.body,
        )
        if (isNew) reply.code(201).header('Location', `${req.url.split('?')[0]}/${link.evidence_id}`)
        return link
      },
    )

    app.delete(
      '/use_cases/:id/controls/:control_id/evidence/:evidence_id',
      {
        schema: {
          operationId: 'unlinkControlEvidence',
          summary: 'Unlink evidence from a control of a use case',
          tags,
          params: ControlEvidenceParams,
          response: { 204: Type.Null({ description: 'Unlinked.' }) },
        },
      },
      async (req, reply) => {
        await policies.unlinkEvidence(req.ctx, req.params.id, req.params.control_id, req.params.evidence_id)
        return reply.code(204).send(null)
      },
    )
  }
}
