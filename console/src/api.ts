import { type Client, createClient } from '@aigov/client'
import type { Me } from './session'

let csrf: string | undefined
let onSignedOut: () => void = () => {}

/** The session's CSRF token, for a second client (uploads with progress). */
export const csrfToken = () => csrf

/** Every call of the console goes through the project's own client, with the person's session cookie. */
export const api: Client = createClient({
  baseUrl: window.location.origin,
  maxRetries: 1,
  session: { csrfToken },
})

export function setCsrf(token: string | null | undefined): void {
  csrf = token ?? undefined
}

export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler
}

/** The result of a call; an ended session (401) sends the person to sign in, and comes back here afterwards. */
export async function call<R extends { error: { status?: number } | null }>(promise: Promise<R>): Promise<R> {
  const result = await promise
  if (result.error && result.error.status === 401) onSignedOut()
  return result
}

/** GET /me: who is signed in, or null. */
export async function loadMe(): Promise<Me | null> {
  const { data: me, error } = await api.me.get()
  if (error) return null
  return {
    tenant: me.tenant,
    role: me.role,
    via: me.via,
    user: me.user ?? null,
    api_key: me.apiKey ?? null,
    csrf_token: me.csrfToken ?? null,
  }
}

/** Ends the session on the service (POST /auth/logout with the CSRF token), whatever the answer. */
export async function signOut(): Promise<void> {
  await api.auth.logout({ maxRetries: 0 }).catch(() => undefined)
  csrf = undefined
}

export interface ProblemInfo {
  code?: string
  message: string
  errors: { field?: string; message?: string }[]
}

/** The problem document of a failed call: its code, its message and the fields it names. */
export function problemOf(error: { message: string; body?: unknown }): ProblemInfo {
  const body = typeof error.body === 'object' && error.body !== null ? (error.body as Record<string, unknown>) : {}
  return {
    code: typeof body.code === 'string' ? body.code : undefined,
    message: typeof body.detail === 'string' ? body.detail : error.message,
    errors: Array.isArray(body.errors) ? (body.errors as ProblemInfo['errors']) : [],
  }
}
