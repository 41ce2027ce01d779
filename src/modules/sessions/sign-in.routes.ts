import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Config } from '../../config.js'
import { serviceOrigin } from '../../http/plugins/auth.js'
import { problem } from '../../http/plugins/openapi.js'
import { AppError } from '../../http/errors.js'
import { SESSION_COOKIE, type SessionsService, SignInRefused } from './sessions.service.js'

/** Where a person lands once signed in. */
export const CONSOLE_PATH = '/console'

/** Per client address: sign-in attempts and link uses, so neither links nor sign-ins can be guessed or flooded. */
export function signInRateLimit(config: Config) {
  return {
    max: config.rateLimitTokenPerMinute,
    timeWindow: 60_000,
    keyGenerator: (req: FastifyRequest) => `signin:${req.ip}`,
  }
}

const REFUSALS: Record<SignInRefused['reason'], string> = {
  unknown_link: 'This sign-in link is not valid. Check that you opened the whole link, or ask for a new one.',
  used_link: 'This sign-in link has already been used. Each link signs in once: ask for a new one.',
  expired_link: 'This sign-in link has expired (links last 15 minutes). Ask for a new one.',
  inactive_user: 'Your account is deactivated. Ask an administrator of your organization.',
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** A plain page saying why signing in did not work: people reach these routes in a browser, not a client. */
export function signInErrorPage(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed</title>` +
        `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>` +
        `<body><h1>Sign-in failed</h1><p>${escapeHtml(message)}</p></body></html>`,
    )
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, Secure when people reach the service over HTTPS. */
export function setSessionCookie(req: FastifyRequest, reply: FastifyReply, config: Config, secret: string): void {
  reply.setCookie(SESSION_COOKIE, secret, {
    httpOnly: true,
    sameSite: 'lax',
    secure: serviceOrigin(req, config).startsWith('https:'),
    path: '/',
    maxAge: Math.floor(config.sessionMaxMs / 1000),
  })
}

/** Who is signing in, as the session records it. */
export function signInClient(req: FastifyRequest) {
  return { address: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id }
}

/** A sign-in that worked, by whatever method: the session cookie, a log line, and the way on. */
export function signedIn(
  req: FastifyRequest,
  reply: FastifyReply,
  config: Config,
  session: { secret: string; tenantId: string },
  method: string,
  to: string,
): FastifyReply {
  setSessionCookie(req, reply, config, session.secret)
  req.log.info({ tenant: session.tenantId, method }, 'signed in')
  return reply.header('cache-control', 'no-store').redirect(to, 303)
}

/** The browser routes at the root: a one-time link signs in, sign-out ends the session. */
export function signInRoutes(sessions: SessionsService, config: Config): FastifyPluginAsyncTypebox {
  const rateLimit = signInRateLimit(config)
  return async (app) => {
    app.get(
      '/auth/link/:token',
      {
        config: { public: true, rateLimit },
        schema: {
          hide: true,
          params: Type.Object({ token: Type.String({ maxLength: 128 }) }),
        },
      },
      async (req, reply) => {
        try {
          const session = await sessions.signInWithLink(req.params.token, signInClient(req))
          return signedIn(req, reply, config, session, 'link', CONSOLE_PATH)
        } catch (err) {
          if (!(err instanceof SignInRefused)) throw err
          req.log.warn({ reason: err.reason, tenant: err.tenantId, method: 'link' }, 'sign-in refused')
          return signInErrorPage(reply, 400, REFUSALS[err.reason])
        }
      },
    )

    app.post(
      '/auth/logout',
      {
        config: { public: true, optionalBody: true, rateLimit },
        schema: {
          operationId: 'logout',
          summary: 'Sign out',
          description:
            'Ends the session of the `aigov_session` cookie, on every instance at once, and clears the cookie. Needs a same-origin `Origin` (a page elsewhere cannot sign a person out).',
          tags: ['sessions'],
          security: [{ sessionCookie: [] }],
          response: {
            204: Type.Null({ description: 'Signed out (also when no session was signed in).' }),
            403: problem("The request's Origin is not this service."),
          },
        },
      },
      async (req, reply) => {
        if (req.headers.origin !== serviceOrigin(req, config)) {
          throw new AppError('forbidden', "sign out from this service's own pages (Origin must be this service)")
        }
        const secret = req.cookies[SESSION_COOKIE]
        if (secret !== undefined) await sessions.signOut(secret, req.id)
        reply.clearCookie(SESSION_COOKIE, { path: '/' })
        return reply.code(204).send(null)
      },
    )
  }
}
