import { type Client, camelize, createClient, OPERATIONS } from '@aigov/client'
import type { Me } from './session'

let csrf: string | undefined
let onSignedOut: () => void = () => {}

/** Every call of the console goes through the project's own client, with the person's session cookie. */
export const api: Client = createClient({
  baseUrl: window.location.origin,
  maxRetries: 1,
  session: { csrfToken: () => csrf },
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
  let me: Record<string, unknown>
  if ('getMe' in OPERATIONS) {
    const res = await api.invoke('getMe' as never, [])
    if (res.error) return null
    me = res.data as unknown as Record<string, unknown>
  } else {
    // A client generated before the service had sessions: the same call, by hand.
    const res = await fetch('/api/v1/integration/me', {
      credentials: 'same-origin',
      headers: { accept: 'application/json' },
    })
    if (!res.ok) return null
    me = camelize(await res.json()) as Record<string, unknown>
  }
  return {
    tenant: me.tenant as string,
    role: me.role as Me['role'],
    via: me.via as Me['via'],
    user: (me.user as Me['user']) ?? null,
    api_key: (me.apiKey as Me['api_key']) ?? null,
    csrf_token: (me.csrfToken as string | null | undefined) ?? null,
  }
}

/** Ends the session on the service (POST /auth/logout with the CSRF token), whatever the answer. */
export async function signOut(): Promise<void> {
  await fetch('/auth/logout', {
    method: 'POST',
    credentials: 'same-origin',
    headers: csrf ? { 'x-csrf-token': csrf } : {},
  }).catch(() => undefined)
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
