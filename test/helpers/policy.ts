import type { TestApp } from './harness.js'

/** Test fixtures for the policy library, written directly (risk types) or through HTTP (controls). */

export async function insertRiskType(t: TestApp, tenant: string, name: string): Promise<string> {
  const at = new Date().toISOString()
  const id = `rt_${Date.now().toString(36).padStart(10, '0')}${Math.random().toString(36).slice(2, 18).padEnd(16, '0')}`
  await t.deps.database.db
    .insertInto('risk_types')
    .values({
      id,
      tenant_id: tenant,
      name,
      name_key: name.toLowerCase(),
      description: null,
      custom: 1,
      hidden: 0,
      created_at: at,
      updated_at: at,
    })
    .execute()
  return id
}

/** Creates a control base with one published version (or returns silently if the key exists). */
export async function publishedControl(
  t: TestApp,
  tenant: string,
  key: string,
  body: Record<string, unknown> = {},
): Promise<{ baseId: string; versionId: string }> {
  const write = t.as(tenant, 'write')
  const base = await write({ method: 'POST', url: '/policy_control_bases', payload: { key, name: `Control ${key}` } })
  if (base.statusCode !== 201) throw new Error(`base ${key}: ${base.statusCode} ${base.body}`)
  return { baseId: base.json().id, versionId: await publishNextVersion(t, tenant, key, body) }
}

export async function publishNextVersion(
  t: TestApp,
  tenant: string,
  key: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const write = t.as(tenant, 'write')
  const version = await write({ method: 'POST', url: '/policy_control_versions', payload: { key, ...body } })
  if (version.statusCode !== 201) throw new Error(`version ${key}: ${version.statusCode} ${version.body}`)
  const published = await write({ method: 'POST', url: `/policy_control_versions/${version.json().id}/publish` })
  if (published.statusCode !== 200) throw new Error(`publish ${key}: ${published.statusCode} ${published.body}`)
  return version.json().id
}

export async function auditActions(t: TestApp, tenant: string, query: string): Promise<string[]> {
  const res = await t.as(tenant, 'read')({ method: 'GET', url: `/audit_logs?page_limit=100&${query}` })
  return res.json().items.map((a: { action: string }) => a.action)
}
