import type { Kysely } from 'kysely'
import type { Tables } from '../../db/tables.js'

type Db = Kysely<Tables>

/**
 * The tenant's configuration rows, each collection in its canonical order. Configuration collections are bounded
 * by their families (and by the document's own limits), so each is read whole.
 */
export async function readConfiguration(db: Db, tenantId: string) {
  const [stages, riskTypes, scenarios, scenarioTypes, customFields, bases, versions, packs, packControls] =
    await Promise.all([
      db
        .selectFrom('workflow_stages')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('type', '=', 'intermediate')
        .orderBy('position')
        .orderBy('id')
        .execute(),
      db.selectFrom('risk_types').selectAll().where('tenant_id', '=', tenantId).orderBy('name_key').execute(),
      db.selectFrom('risk_scenarios').selectAll().where('tenant_id', '=', tenantId).orderBy('name_key').execute(),
      db
        .selectFrom('risk_scenario_risk_types')
        .select(['risk_scenario_id', 'risk_type_id'])
        .where('tenant_id', '=', tenantId)
        .orderBy('risk_type_id')
        .execute(),
      db.selectFrom('custom_fields').selectAll().where('tenant_id', '=', tenantId).orderBy('name_key').execute(),
      db.selectFrom('policy_control_bases').selectAll().where('tenant_id', '=', tenantId).orderBy('key').execute(),
      db
        .selectFrom('policy_control_versions')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .orderBy('key')
        .orderBy('version')
        .execute(),
      db
        .selectFrom('policy_packs')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .orderBy('key')
        .orderBy('version')
        .execute(),
      db
        .selectFrom('policy_pack_controls')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .orderBy('policy_pack_id')
        .orderBy('position')
        .execute(),
    ])
  const [questionnaires, users, teams, members, webhooks] = await Promise.all([
    db
      .selectFrom('questionnaires')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('key')
      .orderBy('version')
      .execute(),
    db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).orderBy('email_key').execute(),
    db.selectFrom('teams').selectAll().where('tenant_id', '=', tenantId).orderBy('name_key').execute(),
    db
      .selectFrom('team_members')
      .innerJoin('users', (j) =>
        j.onRef('users.id', '=', 'team_members.user_id').onRef('users.tenant_id', '=', 'team_members.tenant_id'),
      )
      .select(['team_members.team_id', 'users.email_key'])
      .where('team_members.tenant_id', '=', tenantId)
      .orderBy('users.email_key')
      .execute(),
    db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'description', 'events', 'enabled'])
      .where('tenant_id', '=', tenantId)
      .orderBy('url')
      .orderBy('id')
      .execute(),
  ])
  return {
    stages,
    riskTypes,
    scenarios,
    scenarioTypes,
    customFields,
    bases,
    versions,
    packs,
    packControls,
    questionnaires,
    users,
    teams,
    members,
    webhooks,
  }
}
export type ConfigurationRows = Awaited<ReturnType<typeof readConfiguration>>
