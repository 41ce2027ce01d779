import { createHash, createPublicKey, verify } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import * as legacyProofs from '../../../src/db/migrations/2026-12-01T11-audit-legacy-proofs.js'
import { migrateAndSeal } from '../../../src/main.js'
import { auditKeys } from '../../../src/shared/audit-chain.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

const CANONICAL = [
  'id',
  'tenant_id',
  'seq',
  'created_at',
  'action',
  'resource_type',
  'resource_id',
  'resource_name',
  'sub_object_type',
  'sub_object_id',
  'sub_object_name',
  'use_case_id',
  'actor_type',
  'actor_id',
  'actor_name',
  'source',
  'request_id',
  'changes',
  'metadata',
  'prev_hash',
] as const
/** What a database writer without the chain key can compute: the unkeyed SHA-256 of the old scheme. */
const sha256 = (row: Record<string, unknown>) =>
  createHash('sha256')
    .update(JSON.stringify(CANONICAL.map((f) => row[f])))
    .digest('hex')

// A database writer rewriting audit history (issue 13, item 6).
describeEachDialect('audit chain keyed by a secret the database does not hold, with signed checkpoints', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => {
    await t?.close()
  })

  const db = () => t.deps.database.db
  const verifyChain = async (tenant: string, checkpoint?: string) =>
    (
      await t.as(
        tenant,
        'read',
      )({ method: 'GET', url: `/audit_logs/verify${checkpoint ? `?checkpoint=${checkpoint}` : ''}` })
    ).json()
  const rows = (tenant: string) =>
    db().selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenant).orderBy('seq').execute()
  const writeSome = async (tenant: string, n: number) => {
    for (let i = 0; i < n; i++)
      expect(
        (await t.as(tenant, 'write')({ method: 'POST', url: '/vendors', payload: { name: `${tenant} vendor ${i}` } }))
          .statusCode,
      ).toBe(201)
  }

  it('detects an edited record even when every later hash is recomputed', async () => {
    await writeSome('edit', 4)
    expect(await verifyChain('edit')).toMatchObject({ ok: true, unkeyed: 0 })
    const chain = await rows('edit')
    let prev = chain[1].prev_hash
    for (const row of chain.slice(1)) {
      const forged = {
        ...row,
        prev_hash: prev,
        resource_name: row.seq === chain[1].seq ? 'rewritten' : row.resource_name,
      }
      const hash = sha256(forged)
      await db()
        .updateTable('audit_logs')
        .set({ resource_name: forged.resource_name, prev_hash: prev, hash })
        .where('id', '=', row.id)
        .execute()
      prev = hash
    }
    await db().updateTable('tenants').set({ audit_head: prev }).where('id', '=', 'edit').execute()
    expect(await verifyChain('edit')).toMatchObject({ ok: false, first_bad_id: chain[1].id })

    // Downgrading the rewritten records to the unkeyed scheme does not help: unkeyed never follows keyed.
    await db()
      .updateTable('audit_logs')
      .set({ chain_key_id: null })
      .where('tenant_id', '=', 'edit')
      .where('seq', '>=', chain[1].seq)
      .execute()
    expect(await verifyChain('edit')).toMatchObject({ ok: false, first_bad_id: chain[1].id })
  })

  it('proves with a checkpoint kept earlier that the newest records were deleted and the head reset', async () => {
    await writeSome('truncate', 5)
    const checkpoint = (await t.as('truncate', 'read')({ method: 'GET', url: '/audit_logs/checkpoint' })).json()
    const chain = await rows('truncate')
    expect(checkpoint).toMatchObject({
      tenant: 'truncate',
      sequence: chain.length,
      head: chain.at(-1)!.hash,
      key_id: expect.any(String),
    })
    expect(await verifyChain('truncate', checkpoint.token)).toMatchObject({
      ok: true,
      checkpoint: { sequence: chain.length, matched: true },
    })

    // An auditor checks the signature offline with the published public key.
    const published = (
      await t.as('truncate', 'read')({ method: 'GET', url: '/audit_logs/checkpoint/public_key' })
    ).json()
    expect(published).toMatchObject({ algorithm: 'Ed25519', key_id: checkpoint.key_id })
    const message = `aigov audit checkpoint v1\n${checkpoint.tenant}\n${checkpoint.sequence}\n${checkpoint.head}\n${checkpoint.signed_at}`
    expect(
      verify(
        null,
        Buffer.from(message),
        createPublicKey(published.public_key),
        Buffer.from(checkpoint.signature, 'base64url'),
      ),
    ).toBe(true)

    // More records after the checkpoint still verify against it.
    await t.as('truncate', 'write')({ method: 'POST', url: '/vendors', payload: { name: 'after the checkpoint' } })
    expect(await verifyChain('truncate', checkpoint.token)).toMatchObject({ ok: true, checkpoint: { matched: true } })

    // The attack: drop the newest records, point the tenant's head at what is left. The chain alone looks whole…
    const keep = chain.slice(0, 3)
    await db().deleteFrom('audit_logs').where('tenant_id', '=', 'truncate').where('seq', '>', keep.length).execute()
    await db()
      .updateTable('tenants')
      .set({ audit_seq: keep.length, audit_head: keep.at(-1)!.hash })
      .where('id', '=', 'truncate')
      .execute()
    expect(await verifyChain('truncate')).toMatchObject({ ok: true })
    // …the checkpoint does not.
    expect(await verifyChain('truncate', checkpoint.token)).toMatchObject({
      ok: false,
      checkpoint: { sequence: chain.length, matched: false },
    })
  })

  it('refuses a checkpoint token that was altered, or signed for another tenant', async () => {
    await writeSome('tokens', 1)
    const checkpoint = (await t.as('tokens', 'read')({ method: 'GET', url: '/audit_logs/checkpoint' })).json()
    const forge = (change: Record<string, unknown>) => {
      const { token: _token, ...fields } = checkpoint
      return Buffer.from(JSON.stringify({ ...fields, ...change })).toString('base64url')
    }
    for (const token of [forge({ sequence: 1 }), forge({ head: '0'.repeat(64) }), 'not-a-token']) {
      const res = await t.as('tokens', 'read')({ method: 'GET', url: `/audit_logs/verify?checkpoint=${token}` })
      expect(res.statusCode).toBe(422)
      expect(res.json().errors).toEqual([expect.objectContaining({ field: 'checkpoint' })])
    }
    const foreign = await t.as(
      'tokens-other',
      'read',
    )({ method: 'GET', url: `/audit_logs/verify?checkpoint=${checkpoint.token}` })
    expect(foreign.statusCode).toBe(422)
    expect(foreign.json().detail).toContain('another tenant')
  })

  /** Rewrites the tenant's whole chain in the unkeyed scheme and moves its head, as a database writer without the chain key can. */
  const rewriteUnkeyed = async (tenant: string) => {
    let prev = '0'.repeat(64)
    for (const row of await rows(tenant)) {
      const hash = sha256({ ...row, prev_hash: prev })
      await db()
        .updateTable('audit_logs')
        .set({ prev_hash: prev, hash, chain_key_id: null })
        .where('id', '=', row.id)
        .execute()
      prev = hash
    }
    await db().updateTable('tenants').set({ audit_head: prev }).where('id', '=', tenant).execute()
  }

  /** An upgraded installation: the legacy proofs migration runs again over the database as it is now, and the start seals it. */
  const upgrade = async () => {
    await legacyProofs.down(db())
    await db()
      .deleteFrom('kysely_migration' as never)
      .where('name' as never, '=', '2026-12-01T11-audit-legacy-proofs' as never)
      .execute()
    expect(await migrateAndSeal(t.config, t.deps.database)).toEqual(['2026-12-01T11-audit-legacy-proofs'])
  }

  // Issue 52, F6: a tenant that never had unkeyed records was verified ok after its whole chain was rewritten unkeyed.
  it('refuses a whole chain rewritten in the unkeyed scheme for a tenant whose proof allows no unkeyed record', async () => {
    await writeSome('downgrade', 3)
    expect(await verifyChain('downgrade')).toMatchObject({ ok: true, unkeyed: 0 })
    await rewriteUnkeyed('downgrade')
    const [first] = await rows('downgrade')
    const result = await verifyChain('downgrade')
    expect(result).toMatchObject({ ok: false, first_bad_id: first.id, unkeyed: 0 })
    expect(result.reason).toMatch(/unkeyed.*legacy proof allows unkeyed records nowhere/)
  })

  it('keeps verifying records written before the chain was keyed, up to the sequence the upgrade proved, and no further', async () => {
    await t.token('legacy', 'read')
    await writeSome('keyed-at-upgrade', 2)
    // The tenant's records as the unkeyed scheme wrote them, as a database from before the upgrade holds them.
    await rewriteUnkeyed('legacy')
    const legacy = (await rows('legacy')).length
    await upgrade()
    expect(
      await db()
        .selectFrom('audit_legacy_proofs')
        .select(['legacy_seq', 'mac'])
        .where('tenant_id', '=', 'legacy')
        .executeTakeFirst(),
    ).toEqual({ legacy_seq: legacy, mac: expect.stringMatching(/^[0-9a-f]{64}$/) })
    await writeSome('legacy', 2)
    const all = (await rows('legacy')).length
    expect(all).toBeGreaterThan(legacy)
    expect(await verifyChain('legacy')).toMatchObject({ ok: true, unkeyed: legacy, checked: all })
    // A tenant with keyed records only at the upgrade was proven "none": a rewrite after it fails.
    expect(
      await db()
        .selectFrom('audit_legacy_proofs')
        .select('legacy_seq')
        .where('tenant_id', '=', 'keyed-at-upgrade')
        .executeTakeFirst(),
    ).toEqual({ legacy_seq: null })
    await rewriteUnkeyed('keyed-at-upgrade')
    expect(await verifyChain('keyed-at-upgrade')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('nowhere'),
    })

    // Rewriting the keyed records after the legacy ones unkeyed too: past the proven sequence, refused.
    const saved = await rows('legacy')
    await rewriteUnkeyed('legacy')
    const past = await verifyChain('legacy')
    expect(past).toMatchObject({ ok: false, first_bad_id: saved[legacy].id })
    expect(past.reason).toContain(`only up to sequence ${legacy}`)
    for (const row of saved)
      await db()
        .updateTable('audit_logs')
        .set({ prev_hash: row.prev_hash, hash: row.hash, chain_key_id: row.chain_key_id })
        .where('id', '=', row.id)
        .execute()
    await db()
      .updateTable('tenants')
      .set({ audit_head: saved.at(-1)!.hash })
      .where('id', '=', 'legacy')
      .execute()
    expect(await verifyChain('legacy')).toMatchObject({ ok: true })

    // Editing an unkeyed record now breaks the first keyed record after it, whose HMAC covers the old hash.
    const [first] = await rows('legacy')
    const edited = { ...first, action: 'vendor.deleted' }
    await db()
      .updateTable('audit_logs')
      .set({ action: edited.action, hash: sha256(edited) })
      .where('id', '=', first.id)
      .execute()
    const result = await verifyChain('legacy')
    expect(result.ok).toBe(false)
  })

  it('fails when the legacy proof is removed, altered or unsealed, and no later start seals it again', async () => {
    await writeSome('proof', 2)
    expect(await verifyChain('proof')).toMatchObject({ ok: true })
    const proof = await db()
      .selectFrom('audit_legacy_proofs')
      .selectAll()
      .where('tenant_id', '=', 'proof')
      .executeTakeFirstOrThrow()
    const set = (changes: object) =>
      db().updateTable('audit_legacy_proofs').set(changes).where('tenant_id', '=', 'proof').execute()

    await set({ legacy_seq: 1000 })
    expect(await verifyChain('proof')).toMatchObject({ ok: false, reason: expect.stringContaining('does not match') })
    // The MAC of another tenant's proof does not prove this one.
    const other = await db()
      .selectFrom('audit_legacy_proofs')
      .selectAll()
      .where('tenant_id', '=', 'edit')
      .executeTakeFirstOrThrow()
    await set({ legacy_seq: other.legacy_seq, key_id: other.key_id, mac: other.mac })
    expect(await verifyChain('proof')).toMatchObject({ ok: false, reason: expect.stringContaining('does not match') })

    await set({ legacy_seq: 1000, mac: null })
    expect(await verifyChain('proof')).toMatchObject({ ok: false, reason: expect.stringContaining('never sealed') })
    expect(await migrateAndSeal(t.config, t.deps.database)).toEqual([])
    expect(await verifyChain('proof')).toMatchObject({ ok: false, reason: expect.stringContaining('never sealed') })

    await db().deleteFrom('audit_legacy_proofs').where('tenant_id', '=', 'proof').execute()
    expect(await verifyChain('proof')).toMatchObject({ ok: false, reason: expect.stringContaining('no legacy proof') })

    await db().insertInto('audit_legacy_proofs').values(proof).execute()
    expect(await verifyChain('proof')).toMatchObject({ ok: true })
  })

  it('derives keys from SERVICE_JWT_SECRET or takes AUDIT_CHAIN_KEY / AUDIT_SIGNING_KEY, and refuses bad ones at start', async () => {
    const base = { SERVICE_JWT_SECRET: 'x'.repeat(40) }
    const a = auditKeys(loadConfig(base), 'x'.repeat(40))
    const b = auditKeys(loadConfig({ ...base, AUDIT_CHAIN_KEY: 'k'.repeat(40) }), 'x'.repeat(40))
    expect(a.chain.id).not.toBe(b.chain.id)
    expect(a.independentOfDatabase).toBe(true)
    const rotated = auditKeys(
      loadConfig({ ...base, AUDIT_CHAIN_KEY: 'n'.repeat(40), AUDIT_CHAIN_KEYS_PREVIOUS: 'k'.repeat(40) }),
      'x'.repeat(40),
    )
    expect([...rotated.chainKeys.keys()]).toContain(b.chain.id)
    expect(() => loadConfig({ AUDIT_CHAIN_KEY: 'short' })).toThrow(/AUDIT_CHAIN_KEY/)
    expect(() => loadConfig({ AUDIT_SIGNING_KEY: 'not a key' })).toThrow(/AUDIT_SIGNING_KEY/)
  })
})
