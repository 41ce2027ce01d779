import { isForeignKeyViolation } from '../../db/create-db.js'
import type { ModelRow, RiskScenarioRow, UseCaseRow, VendorRow } from '../../db/tables.js'
import { AppError, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { now } from '../../shared/ids.js'
import * as links from '../../shared/links.repo.js'
import { type LinkEnd, type LinkPath, LINK_TABLES, type LinkTable } from '../../shared/links.repo.js'
import { type AuditEntry, createdChanges, diff, runMutation, type Tx } from '../../shared/mutation.js'
import { catalogItems } from '../../shared/catalog.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import type { Model } from '../models/models.schemas.js'
import { modelCatalog } from '../models/models.service.js'
import { findRiskScenario, riskTypeIdsOf } from '../risk-scenarios/risk-scenarios.service.js'
import { toRiskScenario } from '../risk-scenarios/risk-scenarios.service.js'
import type { UseCase } from '../use-cases/use-cases.schemas.js'
import { useCaseCatalog } from '../use-cases/use-cases.service.js'
import type { Vendor } from '../vendors/vendors.schemas.js'
import { vendorCatalog } from '../vendors/vendors.service.js'
import type { LinkListQuery, RiskScenarioLinkBody, UseCaseRiskScenario } from './relationships.schemas.js'

export type RelationshipsService = ReturnType<typeof createRelationshipsService>

/** The links a client may make and remove by name; each is told from its owner's side. */
export type LinkName = 'use_case_models' | 'use_case_vendors' | 'use_case_risk_scenarios' | 'model_vendors'

const LABELS: Record<LinkEnd, string> = {
  use_case: 'use case',
  model: 'model',
  vendor: 'vendor',
  risk_scenario: 'risk scenario',
  risk_type: 'risk type',
}

/** The result of a link request: the linked record, and whether this request made the link (201) or found it (200). */
export interface Linked<T> {
  record: T
  created: boolean
}

type ScenarioLinkRow = RiskScenarioRow & { link_likelihood: number | null; link_impact: number | null }

export function createRelationshipsService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  /** One page of the records linked to `id` along `path`; 404 when `id` is not a record of the tenant. */
  async function listLinked<Row extends { id: string }, Item>(
    ctx: Ctx,
    path: LinkPath,
    id: string,
    query: LinkListQuery,
    toItems: (rows: Row[]) => Promise<Item[]> | Item[],
    linkColumns: string[] = [],
  ): Promise<Page<Item>> {
    const from = path.from === 'owner' ? path.link.owner : path.link.member
    if (!(await links.findNamed(db, ctx.tenantId, from, id))) throw notFound(LABELS[from], id)
    const ks = keyset(query)
    const rows = await links.listLinked<Row>(db, ctx.tenantId, path, id, ks, linkColumns)
    const page = toPage(rows, ks, (row) => row)
    return { items: await toItems(page.items), pagination: page.pagination }
  }

  /**
   * Links owner and member once: a new link is 201 and audited; an existing one is 200 and changes
   * nothing unless `values` (the link's own columns) differ, which updates and audits them.
   */
  async function link<T>(
    ctx: Ctx,
    table: LinkTable,
    ownerId: string,
    memberId: string,
    load: (tx: Tx) => Promise<T>,
    values: Record<string, number | null | undefined> = {},
  ): Promise<Linked<T>> {
    try {
      return await runMutation(database, ctx, async (tx) => {
        const owner = await links.findNamed(tx, ctx.tenantId, table.owner, ownerId)
        if (!owner) throw notFound(LABELS[table.owner], ownerId)
        const member = await links.findNamed(tx, ctx.tenantId, table.member, memberId)
        if (!member) throw notFound(LABELS[table.member], memberId)
        const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined))
        const existing = await links.findLink<Record<string, unknown>>(tx, ctx.tenantId, table, ownerId, memberId)
        let audit: AuditEntry[] = []
        let created = false
        if (!existing) {
          created = await links.insertLink(tx, ctx.tenantId, table, ownerId, memberId, now(), given)
          const changes = createdChanges(given, Object.keys(given))
          if (created) audit = [links.linkAudit(table, 'linked', owner, member, { changes })]
        } else {
          const changes = diff(existing, { ...existing, ...given }, Object.keys(given))
          if (changes) {
            await links.updateLink(tx, ctx.tenantId, table, ownerId, memberId, given)
            audit = [links.linkAudit(table, 'link_updated', owner, member, { changes })]
          }
        }
        return { result: { record: await load(tx), created }, audit }
      })
    } catch (err) {
      // Either end was deleted between our read and the insert (PostgreSQL): the same answer as if it had never existed.
      if (isForeignKeyViolation(err))
        throw new AppError(
          'not_found',
          `${LABELS[table.owner]} ${ownerId} or ${LABELS[table.member]} ${memberId} was not found`,
        )
      throw err
    }
  }

  async function unlink(ctx: Ctx, name: LinkName, ownerId: string, memberId: string): Promise<void> {
    const table: LinkTable = LINK_TABLES[name]
    await runMutation(database, ctx, async (tx) => {
      const owner = await links.findNamed(tx, ctx.tenantId, table.owner, ownerId)
      if (!owner) throw notFound(LABELS[table.owner], ownerId)
      const member = await links.findNamed(tx, ctx.tenantId, table.member, memberId)
      if (!member || !(await links.deleteLink(tx, ctx.tenantId, table, ownerId, memberId))) {
        throw new AppError(
          'not_found',
          `${LABELS[table.member]} ${memberId} is not linked to ${LABELS[table.owner]} ${ownerId}`,
        )
      }
      return { result: undefined, audit: links.linkAudit(table, 'unlinked', owner, member) }
    })
  }

  const owned = (name: LinkName): LinkPath => ({ link: LINK_TABLES[name], from: 'owner' })
  const reverse = (name: LinkName): LinkPath => ({ link: LINK_TABLES[name], from: 'member' })

  const loadRow = <Row>(tx: Tx, ctx: Ctx, table: 'models' | 'vendors', id: string) =>
    tx
      .selectFrom(table)
      .selectAll()
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', '=', id)
      .executeTakeFirstOrThrow() as Promise<Row>
  const loadModel = async (tx: Tx, ctx: Ctx, id: string) =>
    (await catalogItems(modelCatalog, tx, ctx.tenantId, [await loadRow<ModelRow>(tx, ctx, 'models', id)]))[0]
  const loadVendor = async (tx: Tx, ctx: Ctx, id: string) =>
    (await catalogItems(vendorCatalog, tx, ctx.tenantId, [await loadRow<VendorRow>(tx, ctx, 'vendors', id)]))[0]
  const loadScenario = async (tx: Tx, ctx: Ctx, useCaseId: string, id: string): Promise<UseCaseRiskScenario> => {
    const row = (await findRiskScenario(tx, ctx.tenantId, id))!
    const link = await links.findLink<{ likelihood: number | null; impact: number | null }>(
      tx,
      ctx.tenantId,
      LINK_TABLES.use_case_risk_scenarios,
      useCaseId,
      id,
    )
    const [item] = await scenarioItems(tx, ctx, [
      { ...row, link_likelihood: link?.likelihood ?? null, link_impact: link?.impact ?? null },
    ])
    return item
  }
  const scenarioItems = async (from: Tx, ctx: Ctx, rows: ScenarioLinkRow[]): Promise<UseCaseRiskScenario[]> => {
    const typeIds = await riskTypeIdsOf(
      from,
      ctx.tenantId,
      rows.map((r) => r.id),
    )
    return rows.map(({ link_likelihood, link_impact, ...row }) => ({
      ...toRiskScenario(row, typeIds.get(row.id) ?? []),
      likelihood: link_likelihood,
      impact: link_impact,
    }))
  }

  return {
    listUseCaseModels: (ctx: Ctx, id: string, query: LinkListQuery): Promise<Page<Model>> =>
      listLinked(ctx, owned('use_case_models'), id, query, (rows: ModelRow[]) =>
        catalogItems(modelCatalog, db, ctx.tenantId, rows),
      ),
    listUseCaseVendors: (ctx: Ctx, id: string, query: LinkListQuery): Promise<Page<Vendor>> =>
      listLinked(ctx, owned('use_case_vendors'), id, query, (rows: VendorRow[]) =>
        catalogItems(vendorCatalog, db, ctx.tenantId, rows),
      ),
    listUseCaseRiskScenarios: (ctx: Ctx, id: string, query: LinkListQuery): Promise<Page<UseCaseRiskScenario>> =>
      listLinked(
        ctx,
        owned('use_case_risk_scenarios'),
        id,
        query,
        (rows: ScenarioLinkRow[]) => scenarioItems(db, ctx, rows),
        ['likelihood', 'impact'],
      ),
    listModelVendors: (ctx: Ctx, id: string, query: LinkListQuery): Promise<Page<Vendor>> =>
      listLinked(ctx, owned('model_vendors'), id, query, (rows: VendorRow[]) =>
        catalogItems(vendorCatalog, db, ctx.tenantId, rows),
      ),
    listVendorUseCases: (ctx: Ctx, id: string, query: LinkListQuery): Promise<Page<UseCase>> =>
      listLinked(ctx, reverse('use_case_vendors'), id, query, (rows: UseCaseRow[]) =>
        catalogItems(useCaseCatalog, db, ctx.tenantId, rows),
      ),
    listVendorModels: (ctx: Ctx, id: string, query: LinkListQuery): Promise<Page<Model>> =>
      listLinked(ctx, reverse('model_vendors'), id, query, (rows: ModelRow[]) =>
        catalogItems(modelCatalog, db, ctx.tenantId, rows),
      ),

    linkUseCaseModel: (ctx: Ctx, id: string, modelId: string): Promise<Linked<Model>> =>
      link(ctx, LINK_TABLES.use_case_models, id, modelId, (tx) => loadModel(tx, ctx, modelId)),
    linkUseCaseVendor: (ctx: Ctx, id: string, vendorId: string): Promise<Linked<Vendor>> =>
      link(ctx, LINK_TABLES.use_case_vendors, id, vendorId, (tx) => loadVendor(tx, ctx, vendorId)),
    linkModelVendor: (ctx: Ctx, id: string, vendorId: string): Promise<Linked<Vendor>> =>
      link(ctx, LINK_TABLES.model_vendors, id, vendorId, (tx) => loadVendor(tx, ctx, vendorId)),
    /** Relinking updates the likelihood and impact it sends (null clears) and keeps the ones it leaves out. */
    linkUseCaseRiskScenario: (ctx: Ctx, id: string, body: RiskScenarioLinkBody): Promise<Linked<UseCaseRiskScenario>> =>
      link(
        ctx,
        LINK_TABLES.use_case_risk_scenarios,
        id,
        body.risk_scenario_id,
        (tx) => loadScenario(tx, ctx, id, body.risk_scenario_id),
        { likelihood: body.likelihood, impact: body.impact },
      ),

    unlink,
  }
}
