import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Readiness } from './health.schemas.js'

/** A readiness probe: resolves when the dependency answers, rejects otherwise. */
export type ReadinessCheck = (signal: AbortSignal) => Promise<void>

export const READINESS_TIMEOUT_MS = 1000

export function healthRoutes(checks: Record<string, ReadinessCheck>): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/livez',
      {
        config: { public: true },
        schema: {
          operationId: 'getLiveness',
          summary: 'Liveness: the process answers',
          tags: ['health'],
          security: [],
          response: { 200: Readiness },
        },
      },
      async () => ({ message: true }),
    )

    app.get(
      '/readyz',
      {
        config: { public: true },
        schema: {
          operationId: 'getReadiness',
          summary: 'Readiness: database, Redis and upstream answer within 1 s',
          tags: ['health'],
          security: [],
          response: { 200: Readiness, 503: Readiness },
        },
      },
      async (_req, reply) => {
        const results = await runChecks(checks)
        const ok = Object.values(results).every((r) => r === 'ok')
        return reply.code(ok ? 200 : 503).send({ message: ok, checks: results })
      },
    )
  }
}

async function runChecks(checks: Record<string, ReadinessCheck>): Promise<Record<string, string>> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => [name, await runCheck(check)] as const),
  )
  return Object.fromEntries(entries)
}

async function runCheck(check: ReadinessCheck): Promise<string> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => {
      controller.abort()
      resolve('timeout')
    }, READINESS_TIMEOUT_MS)
  })
  try {
    return await Promise.race([
      check(controller.signal).then(
        () => 'ok',
        () => 'failing',
      ),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** The upstream platform is ready when its /readyz answers 2xx. */
export function upstreamCheck(baseUrl: string): ReadinessCheck {
  return async (signal) => {
    const res = await fetch(`${baseUrl}/readyz`, { signal })
    await res.body?.cancel()
    if (!res.ok) throw new Error(`upstream answered ${res.status}`)
  }
}
