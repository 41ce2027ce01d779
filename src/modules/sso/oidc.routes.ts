import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Config } from '../../config.js'
import { serviceOrigin } from '../../http/plugins/auth.js'
import { CONSOLE_PATH, signedIn, signInClient, signInErrorPage, signInRateLimit } from '../sessions/sign-in.routes.js'
import {
  CALLBACK_PATH,
  LOGIN_COOKIE,
  LOGIN_TTL_MS,
  OidcRefused,
  type OidcRefusal,
  START_PATH,
  safeReturnTo,
  type SsoService,
} from './sso.service.js'

const AGAIN = 'Start signing in again.'

const REFUSALS: Record<OidcRefusal, string> = {
  no_tenant: 'Say which organization you sign in to: open the sign-in link your administrator gave you.',
  no_sso: 'Single sign-on is not set up for this organization. Ask an administrator for a sign-in link.',
  missing_state: `The identity provider sent you back without the sign-in's state. ${AGAIN}`,
  unknown_login: `This sign-in is not known here (it may have been tampered with, or removed). ${AGAIN}`,
  used_login: `This sign-in has already been completed once and cannot be used again. ${AGAIN}`,
  expired_login: `This sign-in took longer than 10 minutes and has expired. ${AGAIN}`,
  other_browser: `This sign-in was started in another browser (or its cookie was lost). ${AGAIN} in this browser.`,
  provider_error: 'The identity provider did not sign you in',
  provider_rejected: `The identity provider's answer could not be verified. ${AGAIN}`,
  provider_unreachable: 'The identity provider could not be reached. Try again in a moment.',
  no_email: 'The identity provider did not send an email address. Ask an administrator to allow the "email" scope.',
  unverified_email:
    'The identity provider did not confirm that your email address is verified, so it cannot sign you in.',
  domain_not_allowed: "Your email address's domain may not sign in to this organization with single sign-on.",
  unknown_email: 'No account of this organization has your email address. Ask an administrator to add you.',
  inactive_user: 'Your account is deactivated. Ask an administrator of your organization.',
}

function refusalPage(req: FastifyRequest, reply: FastifyReply, err: OidcRefused): FastifyReply {
  req.log.warn(
    { reason: err.reason, tenant: err.tenantId, method: 'oidc', ...(err.cause_ && { provider: err.cause_ }) },
    'sign-in refused',
  )
  const message =
    err.reason === 'provider_error' ? `${REFUSALS.provider_error} (${err.cause_ ?? 'error'}).` : REFUSALS[err.reason]
  return signInErrorPage(reply, err.reason === 'provider_unreachable' ? 502 : 400, message)
}

const loginCookie = (req: FastifyRequest, config: Config) => ({
  httpOnly: true,
  // Lax: the provider's redirect back is a top-level GET, which carries Lax cookies.
  sameSite: 'lax' as const,
  secure: serviceOrigin(req, config).startsWith('https:'),
  path: '/auth/oidc',
})

/** Single sign-on at the root: start sends the browser to the tenant's provider, the callback signs the person in. */
export function oidcRoutes(sso: SsoService, config: Config): FastifyPluginAsyncTypebox {
  const rateLimit = signInRateLimit(config)
  return async (app) => {
    app.get(
      START_PATH,
      {
        config: { public: true, rateLimit },
        schema: {
          hide: true,
          querystring: Type.Object({
            tenant: Type.Optional(Type.String({ maxLength: 63 })),
            return_to: Type.Optional(Type.String({ maxLength: 2048 })),
          }),
        },
      },
      async (req, reply) => {
        try {
          const tenant = req.query.tenant
          if (!tenant) throw new OidcRefused('no_tenant')
          const { url, browserSecret } = await sso.start(
            tenant,
            safeReturnTo(req.query.return_to, CONSOLE_PATH),
            serviceOrigin(req, config) + CALLBACK_PATH,
          )
          reply.setCookie(LOGIN_COOKIE, browserSecret, {
            ...loginCookie(req, config),
            maxAge: Math.floor(LOGIN_TTL_MS / 1000),
          })
          return reply.header('cache-control', 'no-store').redirect(url, 303)
        } catch (err) {
          if (err instanceof OidcRefused) return refusalPage(req, reply, err)
          throw err
        }
      },
    )

    app.get(
      CALLBACK_PATH,
      {
        config: { public: true, rateLimit },
        schema: { hide: true },
      },
      async (req, reply) => {
        const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : ''
        const callbackUrl = new URL(serviceOrigin(req, config) + CALLBACK_PATH + query)
        const browserSecret = req.cookies[LOGIN_COOKIE]
        // The cookie has done its work whatever happens next.
        if (browserSecret !== undefined) reply.clearCookie(LOGIN_COOKIE, loginCookie(req, config))
        try {
          const session = await sso.complete(callbackUrl, browserSecret, signInClient(req))
          return signedIn(req, reply, config, session, 'oidc', session.returnTo)
        } catch (err) {
          if (err instanceof OidcRefused) return refusalPage(req, reply, err)
          throw err
        }
      },
    )
  }
}
