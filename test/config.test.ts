import { availableParallelism } from 'node:os'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'

describe('settings', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'sqlite:./data/service.db',
      redisUrl: undefined,
      tokenTtlSeconds: 3600,
      bootstrapTenant: 'default',
      debug: false,
      enableMcp: false,
      mcpReadOnly: false,
      rateLimitPerMinute: 600,
      rateLimitTokenPerMinute: 30,
      workers: 1,
      starterLibrary: true,
      readCacheBytes: 16 * 1024 * 1024,
      recordCacheBytes: 16 * 1024 * 1024,
      logLevel: 'info',
      corsOrigins: [],
      shutdownTimeoutMs: 10_000,
      databaseConnectTimeoutSeconds: 30,
      databasePoolSize: 2 * availableParallelism() + 1,
      metricsToken: undefined,
      metricsPort: undefined,
    })
  })

  it.each([
    ['SERVICE_PORT', '70000'],
    ['SERVICE_PORT', 'http'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://localhost'],
    ['SERVICE_JWT_SECRET', 'short'],
    ['SERVICE_TOKEN_TTL', '0'],
    ['SERVICE_DEBUG', 'maybe'],
    ['ENABLE_MCP_SERVER', 'yesplease'],
    ['RATE_LIMIT_PER_MINUTE', '-1'],
    ['SERVICE_WORKERS', '0'],
    ['SERVICE_READ_CACHE_MB', '-1'],
    ['SERVICE_RECORD_CACHE_MB', '4097'],
    ['LOG_LEVEL', 'loud'],
    ['SERVICE_TENANT', 'Has Spaces'],
    ['SERVICE_SERVER_BASE_URL', 'not a url'],
    ['CORS_ORIGINS', 'https://app.example.com/'],
    ['CORS_ORIGINS', 'app.example.com'],
    ['CORS_ORIGINS', 'https://a.example, ftp://b.example'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
    ['DATABASE_CONNECT_TIMEOUT_S', '-5'],
    ['DATABASE_POOL_SIZE', '1'],
    ['DATABASE_POOL_SIZE', '201'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_PORT', '0'],
    ['WEBHOOK_DNS_SERVERS', 'dns.example.com'],
    ['WEBHOOK_DNS_SERVERS', '10.0.0.2:70000'],
    ['WEBHOOK_DNS_SERVERS', '10.0.0.2,,10.0.0.3'],
    ['WEBHOOK_DNS_SERVERS', '2001:db8::53]:53'],
    ['WEBHOOK_DNS_TIMEOUT_MS', '50'],
    ['WEBHOOK_DNS_TIMEOUT_MS', 'fast'],
  ])('rejects %s=%s naming the setting', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}: `))
  })

  it('reads the DNS servers webhooks ask, by default those of the system', () => {
    expect(loadConfig({})).toMatchObject({ webhookDnsServers: undefined, webhookDnsTimeoutMs: 2000 })
    expect(
      loadConfig({
        WEBHOOK_DNS_SERVERS: ' 10.0.0.2, 10.0.0.3:5353,[2001:db8::53]:53, 2001:db8::54 ',
        WEBHOOK_DNS_TIMEOUT_MS: '500',
      }),
    ).toMatchObject({
      webhookDnsServers: ['10.0.0.2', '10.0.0.3:5353', '[2001:db8::53]:53', '2001:db8::54'],
      webhookDnsTimeoutMs: 500,
    })
  })

  it('reads a list of CORS origins', () => {
    expect(loadConfig({ CORS_ORIGINS: ' https://app.example.com, http://localhost:5173 ,' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ])
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*'])
  })

  it('requires a JWT secret in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SERVICE_JWT_SECRET/)
    expect(loadConfig({ NODE_ENV: 'production', SERVICE_JWT_SECRET: 'x'.repeat(32) }).production).toBe(true)
  })

  it('reads booleans and trims the upstream URL', () => {
    const config = loadConfig({
      SERVICE_DEBUG: 'true',
      MCP_READ_ONLY: '1',
      SERVICE_SERVER_BASE_URL: 'http://up.example/',
    })
    expect(config).toMatchObject({
      debug: true,
      mcpReadOnly: true,
      upstreamBaseUrl: 'http://up.example',
      logLevel: 'debug',
    })
  })
})
