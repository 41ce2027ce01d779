import type { ModelRow } from '../../db/tables.js'
import { notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { auditedUpdate, diff, runMutation } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { nameColumns, presentFields, uniqueName } from '../../shared/records.js'
import * as repo from './models.repo.js'
import type { Model, ModelCreate, ModelListQuery, ModelUpdate } from './models.schemas.js'

export type ModelsService = ReturnType<typeof createModelsService>

const AUDITED_FIELDS = ['name', 'summary', 'source', 'status', 'provider', 'model_type', 'version'] as const
const PLAIN_FIELDS = ['summary', 'source', 'status', 'provider', 'model_type', 'version'] as const
const DEFAULTS = { status: 'none' }

export function createModelsService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  return {
    async list(ctx: Ctx, query: ModelListQuery): Promise<Page<Model>> {
      const ks = keyset(query, repo.MODEL_SORT_COLUMNS)
      return toPage(await repo.listModels(db, ctx.tenantId, query, ks), ks, toModel)
    },

    async get(ctx: Ctx, id: string): Promise<Model> {
      const row = await repo.findModel(db, ctx.tenantId, id)
      if (!row) throw notFound('model', id)
      return toModel(row)
    },

    async create(ctx: Ctx, input: ModelCreate): Promise<Model> {
      const at = now()
      const row: ModelRow = {
        id: newId('mdl'),
        tenant_id: ctx.tenantId,
        ...nameColumns(input.name),
        summary: input.summary ?? null,
        source: input.source ?? null,
        status: input.status ?? DEFAULTS.status,
        provider: input.provider ?? null,
        model_type: input.model_type ?? null,
        version: input.version ?? null,
        created_at: at,
        updated_at: at,
      }
      return uniqueName(db, ctx, { table: 'models', what: 'model' }, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          await repo.insertModel(tx, row)
          const created = toModel(row)
          return {
            result: created,
            audit: { action: 'model.created', resourceType: 'model', resourceId: row.id, resourceName: row.name, changes: diff(blankModel, created, AUDITED_FIELDS) },
          }
        }),
      )
    },

    async update(ctx: Ctx, id: string, input: ModelUpdate): Promise<Model> {
      return uniqueName(db, ctx, { table: 'models', what: 'model' }, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          const current = await repo.findModel(tx, ctx.tenantId, id)
          if (!current) throw notFound('model', id)
          const changes: Partial<ModelRow> = { ...presentFields(input, PLAIN_FIELDS, DEFAULTS), ...(input.name !== undefined && nameColumns(input.name)) }
          const before = toModel(current)
          const after = toModel({ ...current, ...changes })
          return auditedUpdate(
            { before, after, fields: AUDITED_FIELDS, audit: { action: 'model.updated', resourceType: 'model', resourceId: id, resourceName: after.name } },
            async (updatedAt) => {
              await repo.updateModel(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
            },
          )
        }),
      )
    },

    async delete(ctx: Ctx, id: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const current = await repo.findModel(tx, ctx.tenantId, id)
        if (!current) throw notFound('model', id)
        const unlinked = await removeAssociations(tx, database.dialect, ctx.tenantId, 'model', current)
        await repo.deleteModel(tx, ctx.tenantId, id)
        return {
          result: undefined,
          audit: [...unlinked, { action: 'model.deleted', resourceType: 'model', resourceId: id, resourceName: current.name }],
        }
      })
    },
  }
}

export function toModel(row: ModelRow): Model {
  return {
    id: row.id,
    name: row.name,
    summary: row.summary,
    source: row.source,
    status: row.status as Model['status'],
    provider: row.provider,
    model_type: row.model_type,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

const blankModel: Model = {
  id: '', name: null as unknown as string, summary: null, source: null, status: null as unknown as Model['status'], provider: null, model_type: null, version: null, created_at: '', updated_at: '',
}
