import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  hkdfSync,
  type KeyObject,
  sign,
  timingSafeEqual,
  verify,
} from 'node:crypto'
import type { Config } from '../config.js'
import type { AuditLogRow } from '../db/tables.js'

/**
 * The keys that make the audit log tamper-evident without trusting the database: the chain is an HMAC under a
 * key the database does not hold, and checkpoints of a tenant's head are signed with an Ed25519 key whose public
 * half auditors keep. Made once at start (createDeps) from the settings.
 */
export interface AuditKeys {
  /** The key new records are chained under. */
  chain: ChainKey
  /** By id: the current key and the previous ones, which still verify the records written under them. */
  chainKeys: Map<string, ChainKey>
  signing: { privateKey: KeyObject; publicKey: KeyObject; keyId: string }
  /** False when the keys derive from a secret kept in the database itself (no SERVICE_JWT_SECRET nor AUDIT_CHAIN_KEY). */
  independentOfDatabase: boolean
}

interface ChainKey {
  id: string
  key: Buffer
}

const keyId = (material: Buffer | string) =>
  createHash('sha256').update('aigov audit key id\0').update(material).digest('hex').slice(0, 16)

const derive = (secret: string, info: string) => Buffer.from(hkdfSync('sha256', secret, 'aigov audit', info, 32))

function chainKey(secret: string): ChainKey {
  const key = derive(secret, 'chain hmac v2')
  return { id: keyId(key), key }
}

/**
 * AUDIT_CHAIN_KEY (and AUDIT_CHAIN_KEYS_PREVIOUS) key the chain, AUDIT_SIGNING_KEY signs checkpoints; either
 * unset derives from `fallbackSecret` (SERVICE_JWT_SECRET, or the secret generated into the database without it).
 */
export function auditKeys(config: Config, fallbackSecret: string): AuditKeys {
  const chain = chainKey(config.auditChainKey ?? fallbackSecret)
  const chainKeys = new Map([chain, ...config.auditChainKeysPrevious.map(chainKey)].map((k) => [k.id, k]))
  const privateKey = config.auditSigningKey
    ? createPrivateKey(config.auditSigningKey)
    : // An Ed25519 private key is 32 random bytes: wrapped in PKCS#8 DER so Node takes it as a key.
      createPrivateKey({
        key: Buffer.concat([
          ED25519_PKCS8_PREFIX,
          derive(config.auditChainKey ?? fallbackSecret, 'checkpoint ed25519 v1'),
        ]),
        format: 'der',
        type: 'pkcs8',
      })
  const publicKey = createPublicKey(privateKey)
  return {
    chain,
    chainKeys,
    signing: { privateKey, publicKey, keyId: keyId(publicKey.export({ format: 'der', type: 'spki' })) },
    independentOfDatabase: config.auditChainKey !== undefined || config.jwtSecret !== undefined,
  }
}

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

/** The fields a record's hash covers, in the fixed order it reads them (never to be reordered). */
export const HASHED_FIELDS = [
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

export type HashedRow = Omit<AuditLogRow, 'hash'>

/**
 * The record's hash over its canonical content (fixed field order) and the previous hash: HMAC-SHA256 under the
 * chain key it names, or plain SHA-256 for a record from before the chain was keyed (chain_key_id null).
 * Undefined when the record names a key this instance does not have.
 */
export function auditHash(row: HashedRow, keys: AuditKeys): string | undefined {
  const canonical = JSON.stringify(HASHED_FIELDS.map((field) => row[field]))
  if (row.chain_key_id === null) return createHash('sha256').update(canonical).digest('hex')
  const key = keys.chainKeys.get(row.chain_key_id)
  return key && createHmac('sha256', key.key).update(canonical).digest('hex')
}

export interface Checkpoint {
  tenant: string
  sequence: number
  head: string
  signed_at: string
}

const checkpointMessage = (c: Checkpoint) =>
  Buffer.from(`aigov audit checkpoint v1\n${c.tenant}\n${c.sequence}\n${c.head}\n${c.signed_at}`)

export function signCheckpoint(checkpoint: Checkpoint, keys: AuditKeys): string {
  return sign(null, checkpointMessage(checkpoint), keys.signing.privateKey).toString('base64url')
}

export function checkpointSignatureValid(checkpoint: Checkpoint, signature: string, keys: AuditKeys): boolean {
  return verify(null, checkpointMessage(checkpoint), keys.signing.publicKey, Buffer.from(signature, 'base64url'))
}

const legacyProofMessage = (tenantId: string, legacySeq: number | null) =>
  `aigov audit legacy proof v1\n${tenantId}\n${legacySeq ?? 'none'}`

/**
 * The proof of up to which sequence a tenant's chain may hold unkeyed records (null: none): an HMAC under the chain
 * key, so a database writer who rewrites a chain in the unkeyed scheme cannot also move the line it must stay behind.
 */
export function legacyProof(
  tenantId: string,
  legacySeq: number | null,
  keys: AuditKeys,
): { key_id: string; mac: string } {
  return {
    key_id: keys.chain.id,
    mac: createHmac('sha256', keys.chain.key).update(legacyProofMessage(tenantId, legacySeq)).digest('hex'),
  }
}

/** Whether `mac` proves `legacySeq` for the tenant under the chain key it names (the current or a previous one). */
export function legacyProofValid(
  tenantId: string,
  legacySeq: number | null,
  keyId: string,
  mac: string,
  keys: AuditKeys,
): boolean {
  const key = keys.chainKeys.get(keyId)
  if (!key || !/^[0-9a-f]{64}$/.test(mac)) return false
  const expected = createHmac('sha256', key.key).update(legacyProofMessage(tenantId, legacySeq)).digest()
  return timingSafeEqual(expected, Buffer.from(mac, 'hex'))
}
