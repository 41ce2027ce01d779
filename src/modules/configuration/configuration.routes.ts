import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { BODY_LIMIT } from '../../http/plugins/body-parsers.js'
import { AppError } from '../../http/errors.js'
import { NoQuery } from '../../shared/schemas.js'
import { parsedJson, parseYaml, YAML_TYPES } from './configuration.document.js'
import {
  ApplyQuery,
  ConfigurationJsonSchema,
  ConfigurationApplied,
  ConfigurationDocument,
  ConfigurationPlan,
  ConfigurationQuery,
  ExportQuery,
} from './configuration.schemas.js'
import { BUNDLE_TYPE, type Spooled, spool } from './records.archive.js'
import type { ConfigurationService } from './configuration.service.js'

const tags = ['configuration']

// The document is checked by the service (JSON pointers, YAML lines and columns); the route schema describes it.
const documentBody = {
  description:
    'The configuration document, as JSON (`application/json`) or YAML (`application/yaml`); see `GET /configuration/schema`. Errors name each JSON pointer, and in YAML its line and column.',
  content: {
    'application/json': { schema: ConfigurationDocument },
    'application/yaml': { schema: { type: 'string' } },
    [BUNDLE_TYPE]: {
      schema: {
        type: 'string',
        format: 'binary',
        description:
          'A bundle as `GET /configuration?include=records` answers it: configuration.yaml, records/<kind>/*.ndjson, files/<sha256>.',
      },
    },
  },
}

const isBundle = (req: FastifyRequest) => (req.headers['content-type'] ?? '').startsWith(BUNDLE_TYPE)

/** The JSON Schema of the document, as published (draft 2020-12). */
export const CONFIGURATION_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://aigov.dev/schemas/configuration/v1.json',
  ...JSON.parse(JSON.stringify(ConfigurationDocument)),
}

const wantsYaml = (req: FastifyRequest) => {
  const accept = req.headers.accept ?? ''
  return YAML_TYPES.some((type) => accept.includes(type)) && !accept.startsWith('application/json')
}

const documentOf = (req: FastifyRequest) => {
  if (req.body === undefined || req.body === null) {
    throw new AppError('validation_failed', 'a configuration document is required (JSON or YAML)', [
      { field: '(body)', message: 'is required' },
    ])
  }
  return typeof req.body === 'string' ? parseYaml(req.body) : parsedJson(req.body)
}

export function configurationRoutes(
  configuration: ConfigurationService,
  bundleMaxBytes: number,
): FastifyPluginAsyncTypebox {
  /** Each bundle request's spooled archive, from its parser to its handler. */
  const bundles = new WeakMap<FastifyRequest, Spooled>()
  const release = async (req: FastifyRequest) => {
    const archive = bundles.get(req)
    bundles.delete(req)
    await archive?.remove()
  }
  /** Runs `work` on the spooled bundle of the request. */
  const withBundle = async <T>(req: FastifyRequest, work: (archive: Spooled) => Promise<T>) => {
    const archive = bundles.get(req)
    if (!archive)
      throw new AppError('validation_failed', 'the bundle is empty', [{ field: '(body)', message: 'is empty' }])
    try {
      return await work(archive)
    } finally {
      await release(req)
    }
  }

  return async (app) => {
    // A bundle stays a stream, spooled to disk under its own limit by its parser (after authentication), never
    // held in memory; it is kept beside the request, not as its body, which the hooks of every route walk (text
    // checks). Its sha256 stands for it in the Idempotency-Key fingerprint.
    app.addContentTypeParser(BUNDLE_TYPE, (req, payload, done) => {
      spool(payload, bundleMaxBytes).then((archive) => {
        bundles.set(req, archive)
        req.bodyDigest = archive.sha256
        done(null, undefined)
      }, done)
    })
    // A request answered before its handler (a replay, a refusal) or abandoned leaves no spooled file behind.
    app.addHook('onResponse', (req, _reply, done) => {
      release(req).then(() => done(), done)
    })
    app.addHook('onRequestAbort', (req, done) => {
      release(req).then(() => done(), done)
    })
    // YAML bodies arrive as text: the document keeps their lines and columns for its errors.
    app.addContentTypeParser(YAML_TYPES, { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) =>
      done(null, (body as string).trim() === '' ? undefined : body),
    )

    app.get(
      '/configuration',
      {
        schema: {
          operationId: 'exportConfiguration',
          summary: "Export the tenant's configuration as code",
          description:
            'Workflow stages, risk types and scenarios, custom fields, policy controls with their versions, policy packs, questionnaires, users, teams with their members and webhook endpoints (without secrets), matched by natural keys, never ids. Canonical: the same configuration gives the same bytes. JSON, or YAML with `Accept: application/yaml`.',
          tags,
          querystring: ExportQuery,
          response: {
            200: {
              description: 'The configuration document, or with `include=records` the bundle.',
              content: {
                'application/json': { schema: ConfigurationDocument },
                'application/yaml': { schema: { type: 'string' } },
                [BUNDLE_TYPE]: { schema: { type: 'string', format: 'binary' } },
              },
            },
          },
        },
      },
      async (req, reply) => {
        if (req.query.include === 'records') {
          return reply
            .type(BUNDLE_TYPE)
            .header('content-disposition', 'attachment; filename="configuration.tar"')
            .send((await configuration.exportBundle(req.ctx)) as never)
        }
        const yaml = wantsYaml(req)
        const text = await configuration.export(req.ctx, yaml ? 'yaml' : 'json')
        return reply.type(yaml ? 'application/yaml; charset=utf-8' : 'application/json; charset=utf-8').send(text)
      },
    )

    app.get(
      '/configuration/schema',
      {
        schema: {
          operationId: 'getConfigurationSchema',
          summary: 'The JSON Schema of configuration documents',
          tags,
          querystring: NoQuery,
          response: { 200: ConfigurationJsonSchema },
        },
      },
      async (_req, reply) => reply.send(CONFIGURATION_SCHEMA),
    )

    app.post(
      '/configuration/plan',
      {
        config: { role: 'read' },
        attachValidation: true,
        schema: {
          operationId: 'planConfiguration',
          summary: 'What applying a configuration document would change',
          description:
            'Per object: create, update (each changed field, before and after), unchanged, and with `prune=true` delete (of what a section the document carries leaves out). A changed published control, pack or questionnaire version plans a new version. The `plan_id` pins the tenant’s configuration and the document: apply it with the plan to refuse (409) a tenant changed since. Changes nothing.',
          tags,
          querystring: ConfigurationQuery,
          body: documentBody as never,
          response: { 200: ConfigurationPlan },
        },
      },
      async (req) =>
        isBundle(req)
          ? withBundle(req, (archive) => configuration.planBundle(req.ctx, archive, req.query.prune ?? false))
          : configuration.plan(req.ctx, documentOf(req), req.query.prune ?? false),
    )

    app.post(
      '/configuration/apply',
      {
        config: { role: 'admin' },
        attachValidation: true,
        schema: {
          operationId: 'applyConfiguration',
          summary: 'Apply a configuration document',
          description:
            'All of it in one transaction, or nothing: one audit record per change and a `configuration.applied` summary record. With `plan_id`, 409 if the tenant’s configuration changed since that plan. New webhook endpoints get a new secret (see `rotate_secret`).',
          tags,
          querystring: ApplyQuery,
          body: documentBody as never,
          response: { 200: ConfigurationApplied },
        },
      },
      async (req) => {
        const options = { prune: req.query.prune ?? false, planId: req.query.plan_id }
        return isBundle(req)
          ? withBundle(req, (archive) => configuration.applyBundle(req.ctx, archive, options))
          : configuration.apply(req.ctx, documentOf(req), options)
      },
    )
  }
}
