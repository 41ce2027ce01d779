import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam, KeyParam, VersionQuery } from '../../shared/schemas.js'
import type { OwnerKind } from './questionnaires.repo.js'
import {
  AnsweredQuestionnaire, AnswersUpdate, AttachedQuestionnaire, AttachedQuestionnairePage, AttachQuestionnaire, OwnerKeyParams, OwnerPageQuery, Questionnaire,
  QuestionnaireCreate, QuestionnaireListQuery, QuestionnairePage,
} from './questionnaires.schemas.js'
import type { QuestionnairesService } from './questionnaires.service.js'

const tags = ['questionnaires']
const detached = { 204: Type.Null({ description: 'Detached.' }) }

/** The operationIds of one owner kind's attachment routes (they become the client's method names). */
interface OwnerRoutes {
  kind: OwnerKind
  path: string
  idPrefix: string
  label: string
  tag: string
  ops: { list: string; get: string; attach: string; detach: string; answer: string }
}

const OWNER_ROUTES: OwnerRoutes[] = [
  { kind: 'use_case', path: '/use_cases', idPrefix: 'uc', label: 'a use case', tag: 'use cases', ops: { list: 'listUseCaseQuestionnaires', get: 'getUseCaseQuestionnaire', attach: 'attachUseCaseQuestionnaire', detach: 'detachUseCaseQuestionnaire', answer: 'answerUseCaseQuestionnaire' } },
  { kind: 'model', path: '/models', idPrefix: 'mdl', label: 'a model', tag: 'models', ops: { list: 'listModelQuestionnaires', get: 'getModelQuestionnaire', attach: 'attachModelQuestionnaire', detach: 'detachModelQuestionnaire', answer: 'answerModelQuestionnaire' } },
  { kind: 'vendor', path: '/vendors', idPrefix: 'vnd', label: 'a vendor', tag: 'vendors', ops: { list: 'listVendorQuestionnaires', get: 'getVendorQuestionnaire', attach: 'attachVendorQuestionnaire', detach: 'detachVendorQuestionnaire', answer: 'answerVendorQuestionnaire' } },
]

export function questionnaireRoutes(questionnaires: QuestionnairesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/questionnaires', {
      schema: { operationId: 'listQuestionnaires', summary: 'List questionnaires', description: 'The latest version of each key; `all_versions=true` lists every version.', tags, querystring: QuestionnaireListQuery, response: { 200: QuestionnairePage } },
    }, async (req) => questionnaires.list(req.ctx, req.query))

    app.get('/questionnaires/:key', {
      schema: { operationId: 'getQuestionnaire', summary: 'Get a questionnaire by key (latest, or ?version=) or by q_ id', tags, params: KeyParam('questionnaire'), querystring: VersionQuery, response: { 200: Questionnaire } },
    }, async (req) => questionnaires.get(req.ctx, req.params.key, req.query.version))

    app.post('/questionnaires', {
      schema: { operationId: 'createQuestionnaire', summary: 'Publish a new version of a questionnaire', tags, body: QuestionnaireCreate, response: { 201: Questionnaire } },
    }, async (req, reply) => created(req, reply, await questionnaires.create(req.ctx, req.body)))

    for (const owner of OWNER_ROUTES) attachmentRoutes(app as unknown as FastifyInstance, questionnaires, owner)
  }
}

/** Attach, list, get with answers, answer, detach: the same five routes for use cases, models and vendors. */
function attachmentRoutes(fastify: FastifyInstance, questionnaires: QuestionnairesService, owner: OwnerRoutes): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { kind, path, ops, label } = owner
  const ownerTags = ['questionnaires', owner.tag]

  app.get(`${path}/:id/questionnaires`, {
    schema: { operationId: ops.list, summary: `List the questionnaires attached to ${label}`, tags: ownerTags, params: IdParam(owner.idPrefix), querystring: OwnerPageQuery, response: { 200: AttachedQuestionnairePage } },
  }, async (req) => questionnaires.listAttached(req.ctx, kind, req.params.id, req.query))

  app.get(`${path}/:id/questionnaires/:key`, {
    schema: { operationId: ops.get, summary: `Get a questionnaire attached to ${label}, with its answers and progress`, tags: ownerTags, params: OwnerKeyParams, response: { 200: AnsweredQuestionnaire } },
  }, async (req) => questionnaires.getAttached(req.ctx, kind, req.params.id, req.params.key))

  app.post(`${path}/:id/questionnaires`, {
    schema: { operationId: ops.attach, summary: `Attach a questionnaire to ${label}`, tags: ownerTags, params: IdParam(owner.idPrefix), body: AttachQuestionnaire, response: { 201: AttachedQuestionnaire } },
  }, async (req, reply) => {
    const attached = await questionnaires.attach(req.ctx, kind, req.params.id, req.body)
    return created(req, reply, attached, `${req.url.split('?')[0]}/${encodeURIComponent(attached.key)}`)
  })

  app.put(`${path}/:id/questionnaires/:key/answers`, {
    schema: { operationId: ops.answer, summary: `Answer questions of a questionnaire attached to ${label}`, tags: ownerTags, params: OwnerKeyParams, body: AnswersUpdate, response: { 200: AnsweredQuestionnaire } },
  }, async (req) => questionnaires.answer(req.ctx, kind, req.params.id, req.params.key, req.body))

  app.delete(`${path}/:id/questionnaires/:key`, {
    schema: { operationId: ops.detach, summary: `Detach a questionnaire from ${label}`, description: 'Its answers go with it.', tags: ownerTags, params: OwnerKeyParams, response: detached },
  }, async (req, reply) => {
    await questionnaires.detach(req.ctx, kind, req.params.id, req.params.key)
    return reply.code(204).send(null)
  })
}
