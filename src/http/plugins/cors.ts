import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

/**
 * Browsers on CORS_ORIGINS may call the API. Credentials travel in headers (bearer token, API key), never in
 * cookies, so credentialed CORS stays off; the headers a client reads are exposed.
 */
export async function installCors(app: FastifyInstance, origins: string[]): Promise<void> {
  await app.register(cors, {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: [
      'X-Request-ID',
      'ETag',
      'Location',
      'Retry-After',
      'Idempotent-Replayed',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ],
    maxAge: 600,
  })
}
