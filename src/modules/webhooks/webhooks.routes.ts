import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import {
  DeliveryParams,
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointListQuery,
  WebhookEndpointPage,
  WebhookEndpointUpdate,
  WebhookEndpointWithSecret,
} from './webhooks.schemas.js'
import { ENDPOINTS_PER_TENANT, type WebhooksService } from './webhooks.service.js'

const tags = ['webhooks']
const config = { role: 'admin' as const }
const secretConfig = { ...config, oneTimeSecret: 'secret' }
const Params = IdParam('whep')

export function webhookRoutes(webhooks: WebhooksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/webhook_endpoints',
      {
        config,
        schema: {
          operationId: 'listWebhookEndpoints',
          summary: 'List webhook endpoints (admin)',
          tags,
          querystring: WebhookEndpointListQuery,
          response: { 200: WebhookEndpointPage },
        },
      },
      async (req) => webhooks.list(req.ctx, req.query),
    )

    app.get(
      '/webhook_endpoints/:id',
      {
        config,
        schema: {
          operationId: 'getWebhookEndpoint',
          summary: 'Get a webhook endpoint (admin)',
          tags,
          params: Params,
          response: { 200: WebhookEndpoint },
        },
      },
      async (req) => webhooks.get(req.ctx, req.params.id),
    )

    app.post(
      '/webhook_endpoints',
      {
        config: secretConfig,
        schema: {
          operationId: 'createWebhookEndpoint',
          summary: 'Create a webhook endpoint (admin); its signing secret is returned once',
          description: `Every audit record of the tenant whose action matches one of \`events\` is POSTed to \`url\`, signed per Standard Webhooks. Targets on loopback, private, link-local or metadata addresses are refused unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. A tenant has at most ${ENDPOINTS_PER_TENANT} endpoints (409 beyond). An Idempotency-Key replay answers the endpoint without its secret (\`secret_shown: false\`).`,
          tags,
          body: WebhookEndpointCreate,
          response: { 201: WebhookEndpointWithSecret },
        },
      },
      async (req, reply) => created(req, reply, await webhooks.create(req.ctx, req.body)),
    )

    app.patch(
      '/webhook_endpoints/:id',
      {
        config,
        schema: {
          operationId: 'updateWebhookEndpoint',
          summary: 'Update a webhook endpoint (admin)',
          tags,
          params: Params,
          body: WebhookEndpointUpdate,
          response: { 200: WebhookEndpoint },
        },
      },
      async (req) => webhooks.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/webhook_endpoints/:id',
      {
        config,
        schema: {
          operationId: 'deleteWebhookEndpoint',
          summary: 'Delete a webhook endpoint and its delivery log (admin)',
          tags,
          params: Params,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => {
        await webhooks.remove(req.ctx, req.params.id)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/webhook_endpoints/:id/rotate_secret',
      {
        config: secretConfig,
        schema: {
          operationId: 'rotateWebhookEndpointSecret',
          summary: 'Make a new signing secret (admin); the old one also signs for 24 h',
          description:
            'The new secret is returned once: an Idempotency-Key replay answers the endpoint without it (`secret_shown: false`) and rotates nothing.',
          tags,
          params: Params,
          response: { 200: WebhookEndpointWithSecret },
        },
      },
      async (req) => webhooks.rotateSecret(req.ctx, req.params.id),
    )

    app.post(
      '/webhook_endpoints/:id/test',
      {
        config,
        schema: {
          operationId: 'testWebhookEndpoint',
          summary: 'Send a `ping` event to the endpoint (admin)',
          tags,
          params: Params,
          response: { 202: WebhookDelivery },
        },
      },
      async (req, reply) => reply.code(202).send(await webhooks.test(req.ctx, req.params.id)),
    )

    app.get(
      '/webhook_endpoints/:id/deliveries',
      {
        config,
        schema: {
          operationId: 'listWebhookDeliveries',
          summary: 'List the endpoint’s deliveries, newest first (kept 30 days)',
          tags,
          params: Params,
          querystring: WebhookDeliveryListQuery,
          response: { 200: WebhookDeliveryPage },
        },
      },
      async (req) => webhooks.listDeliveries(req.ctx, req.params.id, req.query),
    )

    app.post(
      '/webhook_endpoints/:id/deliveries/:delivery_id/retry',
      {
        config,
        schema: {
          operationId: 'retryWebhookDelivery',
          summary: 'Send a delivery again now (admin)',
          tags,
          params: DeliveryParams,
          response: { 202: WebhookDelivery },
        },
      },
      async (req, reply) =>
        reply.code(202).send(await webhooks.retryDelivery(req.ctx, req.params.id, req.params.delivery_id)),
    )
  }
}
