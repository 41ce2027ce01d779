// The mixed load of `npm run bench`: many tenants whose integrations write while others read. Every write moves
// its tenant's chain head and so empties that tenant's read cache: these lines measure reads as they really are.
import { spawnSync } from 'node:child_process'
import { CLI, P } from './lib.mjs'

export const MIX_TENANTS = 10
export const MIX_USE_CASES = 300

const cliEnv = (databaseUrl) => ({
  PATH: process.env.PATH,
  DATABASE_URL: databaseUrl,
  LOG_LEVEL: 'warn',
  SERVICE_JWT_SECRET: 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz',
})

/**
 * Creates the mix's tenants, each with an admin key (its seed defines a custom field, which takes admin); run before
 * the service starts (the CLI shares its database).
 */
export function createMixTenants(databaseUrl) {
  const keys = []
  for (let t = 0; t < MIX_TENANTS; t++) {
    const tenant = `mix-${t}`
    const cli = (...args) => {
      const res = spawnSync(process.execPath, [CLI, ...args], { env: cliEnv(databaseUrl), encoding: 'utf8' })
      if (res.status !== 0) throw new Error(`aigov ${args.join(' ')} failed: ${res.stderr}`)
      return res.stdout
    }
    cli('tenants', 'create', tenant)
    keys.push({
      tenant,
      key: /^sk_\S+$/m.exec(cli('keys', 'create', '--tenant', tenant, '--role', 'admin', '--name', 'bench-mix'))[0],
    })
  }
  return keys
}

/**
 * Fills each tenant through the API with use cases of the full shape: an owner, a custom field value, regions
 * and industries. Returns, per tenant, its bearer headers and use case ids.
 */
export async function seedMixTenants(base, keys) {
  const tenants = []
  for (const { tenant, key } of keys) {
    const tokenRes = await fetch(`${base}${P}/auth/token`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'x-tenant': tenant },
    })
    if (tokenRes.status !== 200) throw new Error(`mix token: ${tokenRes.status} ${await tokenRes.text()}`)
    const auth = { authorization: `Bearer ${(await tokenRes.json()).access_token}` }
    const json = { ...auth, 'content-type': 'application/json' }
    const post = async (path, body) => {
      const res = await fetch(`${base}${P}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) })
      if (res.status !== 201) throw new Error(`mix seed ${path}: ${res.status} ${await res.text()}`)
      return res.json()
    }
    const owner = await post('/users', { email: `owner@${tenant}.example`, name: `Owner of ${tenant}` })
    const field = await post('/custom_fields', { name: 'Business unit', type: 'string', entity_types: ['use_case'] })
    const ids = []
    // A few at a time, as an intake sync would send them.
    for (let i = 0; i < MIX_USE_CASES; i += 10) {
      const batch = Array.from({ length: Math.min(10, MIX_USE_CASES - i) }, (_, j) =>
        post('/use_cases', {
          name: `Mixed use case ${i + j}`,
          description: 'Scores retail credit applications with gradient-boosted trees.',
          risk_category_level: ['high', 'medium', 'low'][(i + j) % 3],
          regions: ['EU', 'US'],
          industries: ['finance'],
          owner: { owner_id: owner.id },
          custom_fields: [{ custom_field_id: field.id, value: `Unit ${(i + j) % 7}` }],
        }),
      )
      ids.push(...(await Promise.all(batch)).map((uc) => uc.id))
    }
    tenants.push({ auth, json, ids })
  }
  return tenants
}

/**
 * autocannon options for a mix over all tenants at random: `writeShare` of the requests PATCH a use case's
 * description (a real change, so it is audited and moves the head), the rest read — half the first list page of 50,
 * half one use case by id. `readP99()` gives the reads' own p99 (ms), apart from the writes; `writes()` the PATCHes'
 * own p50 and p99 (ms).
 */
export function mix(base, tenants, writeShare) {
  let n = 0
  const pick = (list) => list[Math.floor(Math.random() * list.length)]
  const readTimes = []
  const writeTimes = []
  const options = {
    url: base,
    requests: [
      {
        setupRequest: (req, context) => {
          const tenant = pick(tenants)
          context.write = Math.random() < writeShare
          if (context.write) {
            return {
              ...req,
              method: 'PATCH',
              path: `${P}/use_cases/${pick(tenant.ids)}`,
              headers: tenant.json,
              body: JSON.stringify({ description: `Revised under mixed load ${process.pid}-${n++}.` }),
            }
          }
          const path = Math.random() < 0.5 ? `${P}/use_cases?page_limit=50` : `${P}/use_cases/${pick(tenant.ids)}`
          return { ...req, method: 'GET', path, headers: tenant.auth, body: undefined }
        },
      },
    ],
    // One request at a time per connection: the context describes the request just answered.
    onResponse: (client, _status, _bytes, ms) => {
      const times = client.requestIterator.context.write ? writeTimes : readTimes
      times.push(ms)
    },
  }
  const quantile = (times, q) => {
    times.sort((a, b) => a - b)
    return Math.round((times[Math.floor(q * (times.length - 1))] ?? 0) * 10) / 10
  }
  const readP99 = () => quantile(readTimes, 0.99)
  const writes = () => ({ p50_ms: quantile(writeTimes, 0.5), p99_ms: quantile(writeTimes, 0.99) })
  return { options, readP99, writes }
}
