import type { VendorRow } from '../../db/tables.js'
import { notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { auditedUpdate, diff, runMutation } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { nameColumns, presentFields, uniqueName } from '../../shared/records.js'
import * as repo from './vendors.repo.js'
import type { Vendor, VendorCreate, VendorListQuery, VendorUpdate } from './vendors.schemas.js'

export type VendorsService = ReturnType<typeof createVendorsService>

const AUDITED_FIELDS = ['name', 'description', 'website', 'status'] as const
const PLAIN_FIELDS = ['description', 'website', 'status'] as const
const DEFAULTS = { status: 'active' }

export function createVendorsService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  return {
    async list(ctx: Ctx, query: VendorListQuery): Promise<Page<Vendor>> {
      const ks = keyset(query, repo.VENDOR_SORT_COLUMNS)
      return toPage(await repo.listVendors(db, ctx.tenantId, query, ks), ks, toVendor)
    },

    async get(ctx: Ctx, id: string): Promise<Vendor> {
      const row = await repo.findVendor(db, ctx.tenantId, id)
      if (!row) throw notFound('vendor', id)
      return toVendor(row)
    },

    async create(ctx: Ctx, input: VendorCreate): Promise<Vendor> {
      const at = now()
      const row: VendorRow = {
        id: newId('vnd'),
        tenant_id: ctx.tenantId,
        ...nameColumns(input.name),
        description: input.description ?? null,
        website: input.website ?? null,
        status: input.status ?? DEFAULTS.status,
        created_at: at,
        updated_at: at,
      }
      return uniqueName(db, ctx, { table: 'vendors', what: 'vendor' }, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          await repo.insertVendor(tx, row)
          const created = toVendor(row)
          return {
            result: created,
            audit: { action: 'vendor.created', resourceType: 'vendor', resourceId: row.id, resourceName: row.name, changes: diff(blankVendor, created, AUDITED_FIELDS) },
          }
        }),
      )
    },

    async update(ctx: Ctx, id: string, input: VendorUpdate): Promise<Vendor> {
      return uniqueName(db, ctx, { table: 'vendors', what: 'vendor' }, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          const current = await repo.findVendor(tx, ctx.tenantId, id)
          if (!current) throw notFound('vendor', id)
          const changes: Partial<VendorRow> = { ...presentFields(input, PLAIN_FIELDS, DEFAULTS), ...(input.name !== undefined && nameColumns(input.name)) }
          const before = toVendor(current)
          const after = toVendor({ ...current, ...changes })
          return auditedUpdate(
            { before, after, fields: AUDITED_FIELDS, audit: { action: 'vendor.updated', resourceType: 'vendor', resourceId: id, resourceName: after.name } },
            async (updatedAt) => {
              await repo.updateVendor(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
            },
          )
        }),
      )
    },

    async delete(ctx: Ctx, id: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const current = await repo.findVendor(tx, ctx.tenantId, id)
        if (!current) throw notFound('vendor', id)
        const unlinked = await removeAssociations(tx, database.dialect, ctx.tenantId, 'vendor', current)
        await repo.deleteVendor(tx, ctx.tenantId, id)
        return {
          result: undefined,
          audit: [...unlinked, { action: 'vendor.deleted', resourceType: 'vendor', resourceId: id, resourceName: current.name }],
        }
      })
    },
  }
}

export function toVendor(row: VendorRow): Vendor {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    website: row.website,
    status: row.status as Vendor['status'],
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

const blankVendor: Vendor = { id: '', name: null as unknown as string, description: null, website: null, status: null as unknown as Vendor['status'], created_at: '', updated_at: '' }
