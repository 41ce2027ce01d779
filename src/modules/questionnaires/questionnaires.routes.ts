import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam, VersionQuery } from '../../shared/schemas.js'
import {
  AnsweredQuestionnaire,
  AnswersUpdate,
  AttachedQuestionnaire,
  AttachedQuestionnairePage,
  AttachQuestionnaire,
  OwnerKeyParams,
  OwnerPageQuery,
  Questionnaire,
  QuestionnaireCreate,
  QuestionnaireListQuery,
  QuestionnairePage,
  QuestionnaireParams,
} from './questionnaires.schemas.js'
import type { QuestionnairesService } from './questionnaires.service.js'

const tags = ['questionnaires']
const useCaseTags = ['questionnaires', 'use cases']
const modelTags = ['questionnaires', 'models']
const vendorTags = ['questionnaires', 'vendors']
const detached = { 204: Type.Null({ description: 'Detached.' }) }

/** 201 with the attachment, located at …/questionnaires/{key} under the owner. */
const attachedAt = (req: FastifyRequest, reply: FastifyReply, attached: AttachedQuestionnaire) =>
  created(req, reply, attached, `${req.url.split('?')[0]}/${encodeURIComponent(attached.key)}`)

export function questionnaireRoutes(questionnaires: QuestionnairesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/questionnaires',
      {
        schema: {
          operationId: 'listQuestionnaires',
          summary: 'List questionnaires',
          description: 'The latest version of each key; `all_versions=true` lists every version.',
          tags,
          querystring: QuestionnaireListQuery,
          response: { 200: QuestionnairePage },
        },
      },
      async (req) => questionnaires.list(req.ctx, req.query),
    )

    app.get(
      '/questionnaires/:key',
      {
        schema: {
          operationId: 'getQuestionnaire',
          summary: 'Get a questionnaire by key (latest, or ?version=), by KEY+version or by q_ id',
          tags,
          params: QuestionnaireParams,
          querystring: VersionQuery,
          response: { 200: Questionnaire },
        },
      },
      async (req) => questionnaires.get(req.ctx, req.params.key, req.query.version),
    )

    app.post(
      '/questionnaires',
      {
        schema: {
          operationId: 'createQuestionnaire',
          summary: 'Publish a new version of a questionnaire',
          tags,
          body: QuestionnaireCreate,
          response: { 201: Questionnaire },
        },
      },
      async (req, reply) => created(req, reply, await questionnaires.create(req.ctx, req.body)),
    )

    app.get(
      '/use_cases/:id/questionnaires',
      {
        schema: {
          operationId: 'listUseCaseQuestionnaires',
          summary: 'List the questionnaires attached to a use case',
          tags: useCaseTags,
          params: IdParam('uc'),
          querystring: OwnerPageQuery,
          response: { 200: AttachedQuestionnairePage },
        },
      },
      async (req) => questionnaires.listAttached(req.ctx, 'use_case', req.params.id, req.query),
    )

    app.get(
      '/use_cases/:id/questionnaires/:key',
      {
        schema: {
          operationId: 'getUseCaseQuestionnaire',
          summary: 'Get a questionnaire attached to a use case, with its answers and progress',
          tags: useCaseTags,
          params: OwnerKeyParams,
          response: { 200: AnsweredQuestionnaire },
        },
      },
      async (req) => questionnaires.getAttached(req.ctx, 'use_case', req.params.id, req.params.key),
    )

    app.post(
      '/use_cases/:id/questionnaires',
      {
        schema: {
          operationId: 'attachUseCaseQuestionnaire',
          summary: 'Attach a questionnaire to a use case',
          tags: useCaseTags,
          params: IdParam('uc'),
          body: AttachQuestionnaire,
          response: { 201: AttachedQuestionnaire },
        },
      },
      async (req, reply) =>
        attachedAt(req, reply, await questionnaires.attach(req.ctx, 'use_case', req.params.id, req.body)),
    )

    app.put(
      '/use_cases/:id/questionnaires/:key/answers',
      {
        schema: {
          operationId: 'answerUseCaseQuestionnaire',
          summary: 'Answer questions of a questionnaire attached to a use case',
          tags: useCaseTags,
          params: OwnerKeyParams,
          body: AnswersUpdate,
          response: { 200: AnsweredQuestionnaire },
        },
      },
      async (req) => questionnaires.answer(req.ctx, 'use_case', req.params.id, req.params.key, req.body),
    )

    app.delete(
      '/use_cases/:id/questionnaires/:key',
      {
        schema: {
          operationId: 'detachUseCaseQuestionnaire',
          summary: 'Detach a questionnaire from a use case',
          description: 'Its answers go with it.',
          tags: useCaseTags,
          params: OwnerKeyParams,
          response: detached,
        },
      },
      async (req, reply) => noContent(reply, questionnaires.detach(req.ctx, 'use_case', req.params.id, req.params.key)),
    )

    app.get(
      '/models/:id/questionnaires',
      {
        schema: {
          operationId: 'listModelQuestionnaires',
          summary: 'List the questionnaires attached to a model',
          tags: modelTags,
          params: IdParam('mdl'),
          querystring: OwnerPageQuery,
          response: { 200: AttachedQuestionnairePage },
        },
      },
      async (req) => questionnaires.listAttached(req.ctx, 'model', req.params.id, req.query),
    )

    app.get(
      '/models/:id/questionnaires/:key',
      {
        schema: {
          operationId: 'getModelQuestionnaire',
          summary: 'Get a questionnaire attached to a model, with its answers and progress',
          tags: modelTags,
          params: OwnerKeyParams,
          response: { 200: AnsweredQuestionnaire },
        },
      },
      async (req) => questionnaires.getAttached(req.ctx, 'model', req.params.id, req.params.key),
    )

    app.post(
      '/models/:id/questionnaires',
      {
        schema: {
          operationId: 'attachModelQuestionnaire',
          summary: 'Attach a questionnaire to a model',
          tags: modelTags,
          params: IdParam('mdl'),
          body: AttachQuestionnaire,
          response: { 201: AttachedQuestionnaire },
        },
      },
      async (req, reply) =>
        attachedAt(req, reply, await questionnaires.attach(req.ctx, 'model', req.params.id, req.body)),
    )

    app.put(
      '/models/:id/questionnaires/:key/answers',
      {
        schema: {
          operationId: 'answerModelQuestionnaire',
          summary: 'Answer questions of a questionnaire attached to a model',
          tags: modelTags,
          params: OwnerKeyParams,
          body: AnswersUpdate,
          response: { 200: AnsweredQuestionnaire },
        },
      },
      async (req) => questionnaires.answer(req.ctx, 'model', req.params.id, req.params.key, req.body),
    )

    app.delete(
      '/models/:id/questionnaires/:key',
      {
        schema: {
          operationId: 'detachModelQuestionnaire',
          summary: 'Detach a questionnaire from a model',
          description: 'Its answers go with it.',
          tags: modelTags,
          params: OwnerKeyParams,
          response: detached,
        },
      },
      async (req, reply) => noContent(reply, questionnaires.detach(req.ctx, 'model', req.params.id, req.params.key)),
    )

    app.get(
      '/vendors/:id/questionnaires',
      {
        schema: {
          operationId: 'listVendorQuestionnaires',
          summary: 'List the questionnaires attached to a vendor',
          tags: vendorTags,
          params: IdParam('vnd'),
          querystring: OwnerPageQuery,
          response: { 200: AttachedQuestionnairePage },
        },
      },
      async (req) => questionnaires.listAttached(req.ctx, 'vendor', req.params.id, req.query),
    )

    app.get(
      '/vendors/:id/questionnaires/:key',
      {
        schema: {
          operationId: 'getVendorQuestionnaire',
          summary: 'Get a questionnaire attached to a vendor, with its answers and progress',
          tags: vendorTags,
          params: OwnerKeyParams,
          response: { 200: AnsweredQuestionnaire },
        },
      },
      async (req) => questionnaires.getAttached(req.ctx, 'vendor', req.params.id, req.params.key),
    )

    app.post(
      '/vendors/:id/questionnaires',
      {
        schema: {
          operationId: 'attachVendorQuestionnaire',
          summary: 'Attach a questionnaire to a vendor',
          tags: vendorTags,
          params: IdParam('vnd'),
          body: AttachQuestionnaire,
          response: { 201: AttachedQuestionnaire },
        },
      },
      async (req, reply) =>
        attachedAt(req, reply, await questionnaires.attach(req.ctx, 'vendor', req.params.id, req.body)),
    )

    app.put(
      '/vendors/:id/questionnaires/:key/answers',
      {
        schema: {
          operationId: 'answerVendorQuestionnaire',
          summary: 'Answer questions of a questionnaire attached to a vendor',
          tags: vendorTags,
          params: OwnerKeyParams,
          body: AnswersUpdate,
          response: { 200: AnsweredQuestionnaire },
        },
      },
      async (req) => questionnaires.answer(req.ctx, 'vendor', req.params.id, req.params.key, req.body),
    )

    app.delete(
      '/vendors/:id/questionnaires/:key',
      {
        schema: {
          operationId: 'detachVendorQuestionnaire',
          summary: 'Detach a questionnaire from a vendor',
          description: 'Its answers go with it.',
          tags: vendorTags,
          params: OwnerKeyParams,
          response: detached,
        },
      },
      async (req, reply) => noContent(reply, questionnaires.detach(req.ctx, 'vendor', req.params.id, req.params.key)),
    )
  }
}
