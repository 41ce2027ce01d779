import { createHmac, randomBytes } from 'node:crypto'
import { AppError, notFound } from '../../http/errors.js'
import type { Ctx, Role } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { runMutation } from '../../shared/mutation.js'
import { emailKey } from '../../shared/records.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { hashSecret } from '../api-keys/secrets.js'
import * as repo from './sessions.repo.js'
import type { Me, Session, SessionListQuery } from './sessions.schemas.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { endSessionsOf } from './sessions.repo.js'

/** The cookie that carries a person's session secret. */
export const SESSION_COOKIE = 'aigov_session'
/** How long a sign-in link stays usable. */
export const LINK_TTL_MS = 15 * 60_000
/** A person's sessions at most (browsers and devices); signing in once more ends the oldest. */
export const SESSIONS_PER_USER = 20
/** last_seen_at is written at most this often: the idle timeout is counted to the minute, not per request. */
const TOUCH_EVERY_MS = 60_000

export type SignInMethod = 'link' | 'oidc'

/** Why a sign-in was refused: named on the page and in the log, never with the token. */
export class SignInRefused extends Error {
  constructor(
    readonly reason: 'unknown_link' | 'used_link' | 'expired_link' | 'inactive_user',
    readonly tenantId?: string,
  ) {
    super(reason)
  }
}

export interface Client {
  address: string | null
  userAgent: string | null
  requestId: string | null
}

export interface Person {
  id: string
  email: string
  name: string | null
}

export type SessionsService = ReturnType<typeof createSessionsService>

/** A secret's CSRF token: derived from the cookie, so another origin, which cannot read the cookie, cannot know it. */
export function csrfTokenOf(secret: string): string {
  return createHmac('sha256', secret).update('csrf').digest('base64url')
}

const userActor = (user: Person) => ({ type: 'user' as const, id: user.id, name: user.name ?? user.email })

export function createSessionsService(deps: Pick<Deps, 'database' | 'config'>) {
  const { database, config } = deps
  const { db } = database
  const idleCutoff = (at: number) => new Date(at - config.sessionIdleMs).toISOString()

  /** Starts a session for a person the caller has already proven; returns the cookie's secret. */
  async function startSession(
    tenantId: string,
    user: Person,
    method: SignInMethod,
    client: Client,
    beforeInsert?: (tx: Parameters<Parameters<typeof runMutation>[2]>[0]) => Promise<void>,
  ): Promise<{ secret: string; id: string }> {
    const secret = randomBytes(32).toString('base64url')
    const at = Date.now()
    const row = {
      id: newId('ses'),
      tenant_id: tenantId,
      user_id: user.id,
      token_hash: hashSecret(secret),
      method,
      address: client.address?.slice(0, 64) ?? null,
      user_agent: client.userAgent?.slice(0, 256) ?? null,
      created_at: new Date(at).toISOString(),
      last_seen_at: new Date(at).toISOString(),
      expires_at: new Date(at + config.sessionMaxMs).toISOString(),
    }
    const ctx: Ctx = { tenantId, role: 'read', actor: userActor(user), requestId: client.requestId, source: 'api' }
    await runMutation(database, ctx, async (tx) => {
      await beforeInsert?.(tx)
      await repo.pruneSessions(tx, tenantId, user.id, SESSIONS_PER_USER, idleCutoff(at), row.created_at)
      await repo.insertSession(tx, row)
      return {
        result: undefined,
        audit: {
          action: 'session.created',
          resourceType: 'session',
          resourceId: row.id,
          resourceName: user.email,
          subObjectType: 'user',
          subObjectId: user.id,
          subObjectName: user.email,
          metadata: { method, expires_at: row.expires_at },
        },
      }
    })
    return { secret, id: row.id }
  }

  async function activeUser(tenantId: string, id: string) {
    return db
      .selectFrom('users')
      .select(['id', 'email', 'name', 'active'])
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  return {
    startSession,

    /** A one-time link for the tenant's user with this email; only the hash of its token is stored. */
    async createLoginLink(ctx: Ctx, email: string): Promise<{ token: string; expiresAt: string; user: Person }> {
      const user = await db
        .selectFrom('users')
        .select(['id', 'email', 'name', 'active'])
        .where('tenant_id', '=', ctx.tenantId)
        .where('email_key', '=', emailKey(email))
        .executeTakeFirst()
      if (!user) throw new AppError('not_found', `no user with email ${email} in tenant ${ctx.tenantId}`)
      if (!user.active) throw new AppError('conflict', `user ${user.id} is deactivated; activate them first`)
      const token = randomBytes(32).toString('base64url')
      const createdAt = now()
      const expiresAt = new Date(Date.parse(createdAt) + LINK_TTL_MS).toISOString()
      await runMutation(database, ctx, async (tx) => {
        await repo.insertLoginLink(tx, {
          token_hash: hashSecret(token),
          tenant_id: ctx.tenantId,
          user_id: user.id,
          created_at: createdAt,
          expires_at: expiresAt,
          used_at: null,
        })
        return {
          result: undefined,
          audit: {
            action: 'user.login_link_created',
            resourceType: 'user',
            resourceId: user.id,
            resourceName: user.email,
            metadata: { expires_at: expiresAt },
          },
        }
      })
      return { token, expiresAt, user: { id: user.id, email: user.email, name: user.name } }
    },

    /** Signs the link's person in, once: a used, expired or unknown link, or an inactive person, is refused. */
    async signInWithLink(token: string, client: Client): Promise<{ secret: string; tenantId: string }> {
      const hash = hashSecret(token)
      const link = await repo.findLoginLink(db, hash)
      if (!link) throw new SignInRefused('unknown_link')
      if (link.used_at !== null) throw new SignInRefused('used_link', link.tenant_id)
      if (link.expires_at <= now()) throw new SignInRefused('expired_link', link.tenant_id)
      const user = await activeUser(link.tenant_id, link.user_id)
      if (!user?.active) throw new SignInRefused('inactive_user', link.tenant_id)
      const { secret } = await startSession(link.tenant_id, user, 'link', client, async (tx) => {
        // The one use, claimed in the session's own transaction: of two racing requests only one signs in.
        if (!(await repo.consumeLoginLink(tx, hash, now()))) throw new SignInRefused('used_link', link.tenant_id)
      })
      return { secret, tenantId: link.tenant_id }
    },

    /** Who a session cookie's secret signs in, or null once it has ended (signed out, timed out, person deactivated). */
    async authenticate(secret: string, requestId: string | null): Promise<Ctx | null> {
      const row = await repo.findSessionByHash(db, hashSecret(secret))
      if (!row?.active) return null
      const at = Date.now()
      const lastSeen = Date.parse(row.last_seen_at)
      const ends = Math.min(Date.parse(row.expires_at), lastSeen + config.sessionIdleMs)
      if (ends <= at) return null
      if (at - lastSeen >= TOUCH_EVERY_MS)
        await repo.touchSession(db, row.tenant_id, row.id, new Date(at).toISOString())
      return {
        tenantId: row.tenant_id,
        role: row.role as Role,
        actor: userActor({ id: row.user_id, email: row.email, name: row.name }),
        requestId,
        source: 'api',
        via: 'session',
        session: { id: row.id, csrfToken: csrfTokenOf(secret) },
        expiresAt: Math.min(Date.parse(row.expires_at), at + config.sessionIdleMs),
      }
    },

    /** Ends the session this secret belongs to (sign-out); an ended or unknown one is no error. */
    async signOut(secret: string, requestId: string | null): Promise<void> {
      const row = await repo.findSessionByHash(db, hashSecret(secret))
      if (!row) return
      const ctx: Ctx = {
        tenantId: row.tenant_id,
        role: row.role as Role,
        actor: userActor({ id: row.user_id, email: row.email, name: row.name }),
        requestId,
        source: 'api',
      }
      await runMutation(database, ctx, async (tx) => {
        const ended = await repo.deleteSession(tx, row.tenant_id, row.id)
        return {
          result: undefined,
          audit: ended
            ? [
                {
                  action: 'session.ended',
                  resourceType: 'session',
                  resourceId: row.id,
                  resourceName: row.email,
                  subObjectType: 'user',
                  subObjectId: row.user_id,
                  subObjectName: row.email,
                  metadata: { reason: 'signed_out' },
                },
              ]
            : [],
        }
      })
    },

    async me(ctx: Ctx): Promise<Me> {
      const base = { tenant: ctx.tenantId, role: ctx.role, via: ctx.via ?? 'api_key' }
      if (ctx.actor.type === 'user') {
        const user = await activeUser(ctx.tenantId, ctx.actor.id!)
        if (!user) throw new AppError('unauthorized', 'the person behind this session no longer exists')
        return {
          ...base,
          user: { id: user.id, email: user.email, name: user.name },
          api_key: null,
          ...(ctx.session && { csrf_token: ctx.session.csrfToken }),
        }
      }
      return { ...base, user: null, api_key: { id: ctx.actor.id!, name: ctx.actor.name } }
    },

    async list(ctx: Ctx, query: SessionListQuery): Promise<Page<Session>> {
      const ks = keyset(query)
      const at = Date.now()
      const rows = await repo.listSessions(db, ctx.tenantId, ks, {
        userId: query.user_id,
        idleCutoff: idleCutoff(at),
        at: new Date(at).toISOString(),
      })
      const people = await repo.usersById(
        db,
        ctx.tenantId,
        rows.map((r) => r.user_id),
      )
      return toPage(rows, ks, (row) => ({
        id: row.id,
        user: people.get(row.user_id) ?? { id: row.user_id, email: '', name: null },
        method: row.method as Session['method'],
        address: row.address,
        user_agent: row.user_agent,
        created_at: row.created_at,
        last_seen_at: row.last_seen_at,
        expires_at: row.expires_at,
      }))
    },

    /** An admin ends someone's session: their next request is refused, on every instance. */
    async end(ctx: Ctx, id: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const row = await repo.findSession(tx, ctx.tenantId, id)
        if (!row) throw notFound('session', id)
        await repo.deleteSession(tx, ctx.tenantId, id)
        return {
          result: undefined,
          audit: {
            action: 'session.revoked',
            resourceType: 'session',
            resourceId: id,
            resourceName: row.email,
            subObjectType: 'user',
            subObjectId: row.user_id,
            subObjectName: row.email,
          },
        }
      })
    },
  }
}
