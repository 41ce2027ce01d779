import { createPrivateKey } from 'node:crypto'
import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
/** Settings, parsed once at start from the environment. No other file reads process.env. */

export type Config = Readonly<{
  port: number
  host: string
  databaseUrl: string
  redisUrl: string | undefined
  jwtSecret: string | undefined
  tokenTtlSeconds: number
  bootstrapApiKey: string | undefined
  bootstrapTenant: string
  upstreamBaseUrl: string | undefined
  debug: boolean
  enableMcp: boolean
  mcpReadOnly: boolean
  rateLimitPerMinute: number
  rateLimitTokenPerMinute: number
  workers: number
  starterLibrary: boolean
  /** Memory for rendered GET answers of tenant records, bytes; 0 turns the read cache off (ETags stay). */
  readCacheBytes: number
  /** Memory for use cases, models and vendors kept rendered across writes (ItemCache), bytes; 0 turns it off. */
  recordCacheBytes: number
  /** The largest configuration bundle (document, records and files), bytes. */
  configurationBundleMaxBytes: number
  /** Evidence files a configuration bundle may hold. */
  configurationBundleMaxFiles: number
  /** The largest evidence file, bytes. */
  evidenceMaxBytes: number
  /** Evidence content one tenant may store, bytes (a deduplicated file counts once). */
  evidenceTenantQuotaBytes: number
  /** Evidence bytes one API key may upload per minute, across instances with Redis. */
  evidenceUploadBytesPerMinute: number
  /** How long one upload may take to arrive; an unfinished upload twice this old is swept as abandoned. */
  evidenceUploadTimeoutMs: number
  logLevel: string
  production: boolean
  /** Audit chain HMAC key; previous keys still verify the records written under them. */
  auditChainKey: string | undefined
  auditChainKeysPrevious: string[]
  /** Ed25519 private key (PKCS#8 PEM) signing audit checkpoints. */
  auditSigningKey: string | undefined
  /** Browser origins allowed to call the API (CORS); empty = none. */
  corsOrigins: string[]
  /** How long a stopping process waits for requests in flight before it exits anyway. */
  shutdownTimeoutMs: number
  /** How long start keeps retrying an unreachable PostgreSQL before giving up. */
  databaseConnectTimeoutSeconds: number
  /** PostgreSQL connections each process holds at most (webhook delivery holds 4 more of its own); see defaultPoolSize. */
  databasePoolSize: number
  /** Bearer token that GET /metrics requires on the service's port. */
  metricsToken: string | undefined
  /** Serve /metrics on this port only (unauthenticated, bind it privately) instead of the service's port. */
  metricsPort: number | undefined
  /** Encrypts webhook signing secrets at rest; derived from the JWT secret when unset. */
  webhookSecretKey: string | undefined
  /** Lets webhooks target loopback, private and link-local addresses (tests, closed networks). */
  webhookAllowPrivateNetworks: boolean
  /** How long one webhook send may take, connection to the end of the answer. */
  webhookTimeoutMs: number
  /** DNS servers (ip or ip:port) asked for webhook targets' addresses; undefined: the system's (resolv.conf). */
  webhookDnsServers: string[] | undefined
  /** How long one webhook target's name lookup may take, at save and at each send. */
  webhookDnsTimeoutMs: number
  /** This instance sends webhook events; off, it serves the API only and instances with it on send them. */
  webhookDelivery: boolean
  /** How often an idle event stream sends a comment line. */
  eventsHeartbeatMs: number
  /** How long an event stream waits for its client to take what it was sent before closing it (resumably). */
  eventsSlowClientMs: number
  /** A person's session ends after this long without a request. */
  sessionIdleMs: number
  /** ...and this long after sign-in, whatever happens. */
  sessionMaxMs: number
  /** The origin people and OAuth clients see (links, redirects, metadata); undefined: each request's own. */
  publicUrl: string | undefined
}>

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super(`${setting}: ${problem}`)
  }
}

type Env = Record<string, string | undefined>

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production'
  const jwtSecret = optionalString(env, 'SERVICE_JWT_SECRET')
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret) < 32) {
    throw new ConfigError('SERVICE_JWT_SECRET', 'must be at least 32 bytes long')
  }
  if (production && jwtSecret === undefined) {
    throw new ConfigError('SERVICE_JWT_SECRET', 'is required when NODE_ENV=production')
  }
  const bootstrapTenant = optionalString(env, 'SERVICE_TENANT') ?? 'default'
  if (!TENANT_PATTERN.test(bootstrapTenant)) {
    throw new ConfigError(
      'SERVICE_TENANT',
      'must be 1-63 characters of a-z, 0-9, "-" and "_", starting with a letter or digit',
    )
  }
  const logLevel = optionalString(env, 'LOG_LEVEL') ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`)
  }
  const debug = boolean(env, 'SERVICE_DEBUG', false)
  const auditChainKey = secret(env, 'AUDIT_CHAIN_KEY')
  const auditChainKeysPrevious = (optionalString(env, 'AUDIT_CHAIN_KEYS_PREVIOUS') ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
  if (auditChainKeysPrevious.some((k) => Buffer.byteLength(k) < 32))
    throw new ConfigError('AUDIT_CHAIN_KEYS_PREVIOUS', 'every key must be at least 32 bytes long')
  const auditSigningKey = optionalString(env, 'AUDIT_SIGNING_KEY')?.replaceAll('\\n', '\n')
  if (auditSigningKey !== undefined && !isEd25519PrivateKey(auditSigningKey)) {
    throw new ConfigError(
      'AUDIT_SIGNING_KEY',
      'must be an Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519)',
    )
  }
  const evidenceMaxBytes = integer(env, 'EVIDENCE_MAX_MB', 25, 1, 1024) * 1024 * 1024
  const evidenceUploadBytesPerMinute = integer(env, 'EVIDENCE_UPLOAD_MB_PER_MINUTE', 100, 1, 1024 * 1024) * 1024 * 1024
  // A budget below the largest file would refuse that file forever, whatever the client waits.
  if (evidenceUploadBytesPerMinute < evidenceMaxBytes)
    throw new ConfigError(
      'EVIDENCE_UPLOAD_MB_PER_MINUTE',
      `must be at least EVIDENCE_MAX_MB (${evidenceMaxBytes / (1024 * 1024)})`,
    )
  return Object.freeze({
    port: integer(env, 'SERVICE_PORT', 8080, 0, 65535),
    host: optionalString(env, 'SERVICE_HOST') ?? '0.0.0.0',
    databaseUrl: databaseUrl(env),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    jwtSecret,
    tokenTtlSeconds: integer(env, 'SERVICE_TOKEN_TTL', 3600, 1, 86400 * 7),
    bootstrapApiKey: optionalString(env, 'SERVICE_API_KEY'),
    bootstrapTenant,
    upstreamBaseUrl: url(env, 'SERVICE_SERVER_BASE_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    debug,
    enableMcp: boolean(env, 'ENABLE_MCP_SERVER', false),
    mcpReadOnly: boolean(env, 'MCP_READ_ONLY', false),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    rateLimitTokenPerMinute: integer(env, 'RATE_LIMIT_TOKEN_PER_MINUTE', 30, 1, 1_000_000),
    workers: integer(env, 'SERVICE_WORKERS', 1, 1, 64),
    starterLibrary: boolean(env, 'SERVICE_STARTER_LIBRARY', true),
    readCacheBytes: integer(env, 'SERVICE_READ_CACHE_MB', 16, 0, 4096) * 1024 * 1024,
    recordCacheBytes: integer(env, 'SERVICE_RECORD_CACHE_MB', 16, 0, 4096) * 1024 * 1024,
    evidenceMaxBytes,
    configurationBundleMaxBytes: integer(env, 'CONFIGURATION_BUNDLE_MAX_MB', 2048, 1, 1024 * 1024) * 1024 * 1024,
    configurationBundleMaxFiles: integer(env, 'CONFIGURATION_BUNDLE_MAX_FILES', 100_000, 1, 10_000_000),
    evidenceTenantQuotaBytes: integer(env, 'EVIDENCE_TENANT_QUOTA_MB', 1024, 1, 1024 * 1024) * 1024 * 1024,
    evidenceUploadBytesPerMinute,
    // At most the 15 s in which the server takes any request whole (REQUEST_TIMEOUT_MS): it cannot lengthen that.
    evidenceUploadTimeoutMs: integer(env, 'EVIDENCE_UPLOAD_TIMEOUT_S', 15, 1, 15) * 1000,
    logLevel: debug && env.LOG_LEVEL === undefined ? 'debug' : logLevel,
    production,
    auditChainKey,
    auditChainKeysPrevious,
    auditSigningKey,
    corsOrigins: corsOrigins(env),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    databaseConnectTimeoutSeconds: integer(env, 'DATABASE_CONNECT_TIMEOUT_S', 30, 0, 3600),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', defaultPoolSize(), 2, 200),
    metricsToken: metricsToken(env),
    metricsPort:
      optionalString(env, 'METRICS_PORT') === undefined ? undefined : integer(env, 'METRICS_PORT', 0, 1, 65535),
    webhookSecretKey: secretSetting(env, 'WEBHOOK_SECRET_KEY'),
    webhookAllowPrivateNetworks: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookDnsServers: dnsServers(env, 'WEBHOOK_DNS_SERVERS'),
    webhookDnsTimeoutMs: integer(env, 'WEBHOOK_DNS_TIMEOUT_MS', 2000, 100, 30_000),
    webhookDelivery: boolean(env, 'WEBHOOK_DELIVERY', true),
    eventsHeartbeatMs: integer(env, 'EVENTS_HEARTBEAT_MS', 15_000, 100, 600_000),
    eventsSlowClientMs: integer(env, 'EVENTS_SLOW_CLIENT_MS', 10_000, 100, 600_000),
    sessionIdleMs: integer(env, 'SESSION_IDLE_HOURS', 12, 1, 24 * 90) * 3_600_000,
    sessionMaxMs: integer(env, 'SESSION_MAX_DAYS', 7, 1, 365) * 86_400_000,
    publicUrl: publicUrl(env),
  })
}

/**
 * A chosen bootstrap admin key must be as hard to guess as a generated one. Checked where the service makes it
 * its admin key: clients (aigov mcp --stdio) read the same setting and leave judging a credential to the service.
 */
export function checkBootstrapKey(key: string): void {
  if (!/^[A-Za-z0-9_-]{32,256}$/.test(key)) {
    throw new ConfigError(
      'SERVICE_API_KEY',
      'must be 32 to 256 characters of A-Z, a-z, 0-9, "_" and "-" (e.g. the sk_… a key creation prints)',
    )
  }
}

function secret(env: Env, name: string): string | undefined {
  const value = optionalString(env, name)
  if (value !== undefined && Buffer.byteLength(value) < 32)
    throw new ConfigError(name, 'must be at least 32 bytes long')
  return value
}

function isEd25519PrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'ed25519'
  } catch {
    return false
  }
}

function optionalString(env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

function secretSetting(env: Env, name: string): string | undefined {
  const value = optionalString(env, name)
  if (value !== undefined && Buffer.byteLength(value) < 32)
    throw new ConfigError(name, 'must be at least 32 bytes long')
  return value
}

/**
 * Twice the cores this process may use, plus one (as Prisma sizes its pools): on a small machine that also runs
 * PostgreSQL, more connections than it has cores to run them on only take turns (npm run bench's PATCH mix ran
 * faster with fewer; bench/results/design-measurements.md). Two at least: writes take at most 60 % of the pool, so reads always
 * have one (group commit).
 */
function defaultPoolSize(): number {
  return Math.min(200, Math.max(2, 2 * availableParallelism() + 1))
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optionalString(env, name)
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`)
  }
  return Number(raw)
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = optionalString(env, name)?.toLowerCase()
  if (raw === undefined) return fallback
  if (['true', '1', 'yes', 'on'].includes(raw)) return true
  if (['false', '0', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(name, `must be true or false, got "${raw}"`)
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = optionalString(env, name)
  if (raw === undefined) return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(name, 'is not a valid URL')
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`)
  }
  return raw
}

function databaseUrl(env: Env): string {
  const raw = optionalString(env, 'DATABASE_URL') ?? 'sqlite:./data/service.db'
  if (raw.startsWith('sqlite:')) {
    if (raw.length === 'sqlite:'.length)
      throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path, e.g. sqlite:./data/service.db')
    return raw
  }
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://')) {
    try {
      new URL(raw)
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL')
    }
    return raw
  }
  throw new ConfigError('DATABASE_URL', 'must be sqlite:<path> or postgres://…')
}

/** Comma-separated origins, each scheme://host[:port] exactly as browsers send it in `Origin`; `*` allows any. */
function corsOrigins(env: Env): string[] {
  const raw = optionalString(env, 'CORS_ORIGINS')
  if (raw === undefined) return []
  const origins = raw
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '')
  for (const origin of origins) {
    if (origin === '*') continue
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      // reported below
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `"${origin}" is not an origin like https://app.example.com (scheme, host, optional port; no path or trailing slash)`,
      )
    }
  }
  return origins
}

/** Comma-separated DNS servers: an IPv4 or IPv6 address, with an optional port (`1.2.3.4:53`, `[::1]:53`). */
function dnsServers(env: Env, name: string): string[] | undefined {
  const raw = optionalString(env, name)
  if (raw === undefined) return undefined
  return raw.split(',').map((entry) => {
    const server = entry.trim()
    const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server) ??
      /^([^:]+)(?::(\d{1,5}))?$/.exec(server) ?? [server, server, undefined]
    const [, address, port] = match
    if (!isIP(address) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
      throw new ConfigError(
        name,
        `"${server}" is not a DNS server address like 10.0.0.2, 10.0.0.2:53 or [2001:db8::53]:53`,
      )
    }
    return server
  })
}

/** An origin (scheme, host, optional port) that links and redirects are built on. */
function publicUrl(env: Env): string | undefined {
  const raw = url(env, 'SERVICE_PUBLIC_URL', ['http:', 'https:'])
  if (raw === undefined) return undefined
  const parsed = new URL(raw)
  if (parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '')
    throw new ConfigError('SERVICE_PUBLIC_URL', 'must be an origin like https://governance.example.com (no path)')
  return parsed.origin
}

function metricsToken(env: Env): string | undefined {
  const token = optionalString(env, 'METRICS_TOKEN')
  if (token !== undefined && token.length < 16)
    throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long')
  return token
}
