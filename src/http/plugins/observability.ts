import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../../shared/deps.js'
import { AppError } from '../errors.js'
import { redactQuery } from '../../shared/urls.js'

/** Probes and scrapes arrive every few seconds: their access lines are debug, so they do not drown the rest. */
const QUIET_ROUTES = new Set(['/livez', '/readyz', '/metrics'])

/** The route template (`/api/v1/integration/use_cases/:id`), never the raw URL: bounded label values. */
export function routeLabel(req: FastifyRequest): string {
  return req.routeOptions.url ?? 'unmatched'
}

/**
 * One access-log line and one histogram observation per request, and GET /metrics on the service's port
 * when METRICS_TOKEN protects it (with METRICS_PORT, main serves it on that port instead).
 */
export function installObservability(app: FastifyInstance, deps: Deps): void {
  const { metrics, config } = deps
  app.addHook('onResponse', (req, reply, done) => {
    const route = routeLabel(req)
    const durationMs = reply.elapsedTime
    metrics.httpRequests.observe({ method: req.method, route, status_code: reply.statusCode }, durationMs / 1000)
    const line = {
      method: req.method,
      route,
      path: redactQuery(req.url.split('?', 1)[0]),
      status: reply.statusCode,
      duration_ms: Math.round(durationMs * 10) / 10,
      tenant: req.ctx?.tenantId,
      key_id: req.ctx?.actor.id,
    }
    if (QUIET_ROUTES.has(route)) req.log.debug(line, 'request')
    else req.log.info(line, 'request')
    done()
  })
  if (config.metricsToken === undefined || config.metricsPort !== undefined) return
  const expected = digest(config.metricsToken)
  app.get('/metrics', { schema: { hide: true }, config: { public: true } }, async (req, reply) => {
    const given = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1]
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      reply.header('www-authenticate', 'Bearer realm="metrics"')
      throw new AppError('unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>')
    }
    reply.header('content-type', metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}

/** Equal-length digests: the comparison takes the same time whatever the token's length. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
