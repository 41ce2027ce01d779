import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { created } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import {
  PolicyControl,
  PolicyControlBase,
  PolicyControlBaseCreate,
  PolicyControlBaseListQuery,
  PolicyControlBasePage,
  PolicyControlBaseUpdate,
  PolicyControlListQuery,
  PolicyControlPage,
  PolicyControlVersion,
  PolicyControlVersionCreate,
  PolicyControlVersionListQuery,
  PolicyControlVersionPage,
  PolicyControlVersionUpdate,
} from './policy-controls.schemas.js'
import type { PolicyControlsService } from './policy-controls.service.js'

const tags = ['policy controls']

export function policyControlRoutes(controls: PolicyControlsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/policy_control_bases',
      {
        schema: {
          operationId: 'listPolicyControlBases',
          summary: 'List policy control bases',
          tags,
          querystring: PolicyControlBaseListQuery,
          response: { 200: PolicyControlBasePage },
        },
      },
      async (req) => controls.listBases(req.ctx, req.query),
    )

    app.get(
      '/policy_control_bases/:id',
      {
        schema: {
          operationId: 'getPolicyControlBase',
          summary: 'Get a policy control base',
          tags,
          params: IdParam('pcb'),
          response: { 200: PolicyControlBase },
        },
      },
      async (req) => controls.getBase(req.ctx, req.params.id),
    )

    app.post(
      '/policy_control_bases',
      {
        schema: {
          operationId: 'createPolicyControlBase',
          summary: 'Create a policy control base',
          description: '`key` is unique per tenant (409).',
          tags,
          body: PolicyControlBaseCreate,
          response: { 201: PolicyControlBase },
        },
      },
      async (req, reply) => created(req, reply, await controls.createBase(req.ctx, req.body)),
    )

    app.patch(
      '/policy_control_bases/:id',
      {
        schema: {
          operationId: 'updatePolicyControlBase',
          summary: 'Rename, archive or deprecate a policy control base',
          tags,
          params: IdParam('pcb'),
          body: PolicyControlBaseUpdate,
          response: { 200: PolicyControlBase },
        },
      },
      async (req) => controls.updateBase(req.ctx, req.params.id, req.body),
    )

    app.get(
      '/policy_control_versions',
      {
        schema: {
          operationId: 'listPolicyControlVersions',
          summary: 'List policy control versions',
          tags,
          querystring: PolicyControlVersionListQuery,
          response: { 200: PolicyControlVersionPage },
        },
      },
      async (req) => controls.listVersions(req.ctx, req.query),
    )

    app.get(
      '/policy_control_versions/:id',
      {
        schema: {
          operationId: 'getPolicyControlVersion',
          summary: 'Get a policy control version',
          tags,
          params: IdParam('pcv'),
          response: { 200: PolicyControlVersion },
        },
      },
      async (req) => controls.getVersion(req.ctx, req.params.id),
    )

    app.post(
      '/policy_control_versions',
      {
        schema: {
          operationId: 'createPolicyControlVersion',
          summary: 'Create the next draft version of a control',
          tags,
          body: PolicyControlVersionCreate,
          response: { 201: PolicyControlVersion },
        },
      },
      async (req, reply) => created(req, reply, await controls.createVersion(req.ctx, req.body)),
    )

    app.patch(
      '/policy_control_versions/:id',
      {
        schema: {
          operationId: 'updatePolicyControlVersion',
          summary: 'Edit a draft control version',
          description: 'A published version is immutable (409).',
          tags,
          params: IdParam('pcv'),
          body: PolicyControlVersionUpdate,
          response: { 200: PolicyControlVersion },
        },
      },
      async (req) => controls.updateVersion(req.ctx, req.params.id, req.body),
    )

    app.post(
      '/policy_control_versions/:id/publish',
      {
        schema: {
          operationId: 'publishPolicyControlVersion',
          summary: 'Publish a draft control version',
          description:
            "Publishing makes the version immutable and, if it is the highest, the base's latest version. Publishing twice answers 409.",
          tags,
          params: IdParam('pcv'),
          response: { 200: PolicyControlVersion },
        },
      },
      async (req) => controls.publishVersion(req.ctx, req.params.id),
    )

    app.get(
      '/policy_controls',
      {
        schema: {
          operationId: 'listPolicyControls',
          summary: 'List published policy controls',
          description: 'The latest published version of each non-archived base.',
          tags,
          querystring: PolicyControlListQuery,
          response: { 200: PolicyControlPage },
        },
      },
      async (req) => controls.listControls(req.ctx, req.query),
    )

    app.get(
      '/policy_controls/:id',
      {
        schema: {
          operationId: 'getPolicyControl',
          summary: 'Get a published policy control by its base id',
          tags,
          params: IdParam('pcb'),
          response: { 200: PolicyControl },
        },
      },
      async (req) => controls.getControl(req.ctx, req.params.id),
    )
  }
}
