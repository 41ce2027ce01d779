import type { AuditedDatabase } from '../../shared/audit-append.js'
import { isUniqueViolation } from '../../db/create-db.js'
import { AppError } from '../../http/errors.js'
import { TENANT_PATTERN } from '../../config.js'
import { createAuditNameSearch } from '../../shared/audit-name-search.js'
import { type Ctx, systemCtx } from '../../shared/context.js'
import { now } from '../../shared/ids.js'
import { legacyProof } from '../../shared/audit-chain.js'
import { type AuditEntry, GENESIS_HASH, runMutation, type Tx } from '../../shared/mutation.js'
import { provisionSystemStages } from '../workflow-stages/workflow-stages.service.js'

export interface Tenant {
  id: string
  created_at: string
}

/** Work every new tenant needs inside its creating transaction (system workflow stages, …); returns its audit entries. */
export type TenantProvisioner = (tx: Tx, ctx: Ctx) => Promise<AuditEntry[] | undefined>

/** Run for every tenant, whoever creates it (bootstrap, CLI, tests): a tenant without them is not usable. */
const BUILT_IN_PROVISIONERS: TenantProvisioner[] = [provisionSystemStages]

export function createTenantsService(database: AuditedDatabase, provisioners: TenantProvisioner[] = []) {
  const { db } = database

  async function create(id: string, source: Ctx['source'] = 'system'): Promise<Tenant> {
    if (!TENANT_PATTERN.test(id)) {
      throw new AppError(
        'validation_failed',
        'tenant: must be 1-63 characters of a-z, 0-9, "-" and "_", starting with a letter or digit',
        [{ field: 'tenant', message: 'invalid tenant id' }],
      )
    }
    const ctx = systemCtx(id, source)
    const tenant = { id, created_at: now() }
    try {
      await runMutation(database, ctx, async (tx) => {
        await tx
          .insertInto('tenants')
          .values({ ...tenant, audit_seq: 0, audit_head: GENESIS_HASH })
          .execute()
        // A new tenant's chain is keyed from its first record: proven here, so an unkeyed rewrite of it fails verify.
        await tx
          .insertInto('audit_legacy_proofs')
          .values({ tenant_id: id, legacy_seq: null, ...legacyProof(id, null, database.audit.keys) })
          .execute()
        await createAuditNameSearch(tx, database.dialect, id)
        const audit: AuditEntry[] = [
          { action: 'tenant.created', resourceType: 'tenant', resourceId: id, resourceName: id },
        ]
        for (const provision of [...BUILT_IN_PROVISIONERS, ...provisioners])
          audit.push(...((await provision(tx, ctx)) ?? []))
        return { result: undefined, audit }
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('conflict', `tenant ${id} already exists`)
      throw err
    }
    return tenant
  }

  return {
    create,

    async list(): Promise<Tenant[]> {
      return db.selectFrom('tenants').select(['id', 'created_at']).orderBy('id').execute()
    },

    async exists(id: string): Promise<boolean> {
      return (await db.selectFrom('tenants').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
    },

    /** Creates the tenant unless it exists; safe when several processes start at once. */
    async ensure(id: string): Promise<boolean> {
      if (await this.exists(id)) return false
      try {
        await create(id)
        return true
      } catch (err) {
        if (err instanceof AppError && err.code === 'conflict') return false
        throw err
      }
    },
  }
}

export type TenantsService = ReturnType<typeof createTenantsService>
