// Who is signed in, and getting a person back to the page they were on when their session ended.

export interface Me {
  tenant: string
  role: 'read' | 'write' | 'admin'
  via: 'session' | 'api_key' | 'oauth'
  user: { id: string; email: string; name: string | null } | null
  api_key: { id: string; name: string | null } | null
  csrf_token?: string | null
}

/** The console's own base path: every page path below is relative to it. */
export const BASE = '/console'
const PENDING = 'aigov.console.return_to'

/** Only a page of the console itself is a place to return to (no open redirect through the sign-in page). */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value?.startsWith('/') || value.startsWith('//') || value.includes('\\')) return '/'
  if (value.startsWith('/sign-in')) return '/'
  return value
}

/** The sign-in page's address for a person who was on `here` (a console path with its query). */
export function signInPath(here: string): string {
  const back = safeReturnTo(here)
  return back === '/' ? '/sign-in' : `/sign-in?return_to=${encodeURIComponent(back)}`
}

/** The service's single sign-on start for a tenant, coming back to the console page `returnTo`. */
export function ssoStartUrl(tenant: string, returnTo: string): string {
  const params = new URLSearchParams({ tenant: tenant.trim(), return_to: BASE + safeReturnTo(returnTo) })
  return `/auth/oidc/start?${params}`
}

/** Remembers where to go once signed in: a one-time link lands on /console, which then continues here. */
export function rememberReturn(storage: Pick<Storage, 'setItem'>, returnTo: string): void {
  const back = safeReturnTo(returnTo)
  if (back !== '/') storage.setItem(PENDING, back)
}

/** The remembered page, once (it is forgotten as it is read). */
export function takeReturn(storage: Pick<Storage, 'getItem' | 'removeItem'>): string | undefined {
  const value = storage.getItem(PENDING)
  storage.removeItem(PENDING)
  const back = safeReturnTo(value)
  return back === '/' ? undefined : back
}

export const ROLE_LABEL: Record<Me['role'], string> = {
  read: 'Can view',
  write: 'Can edit',
  admin: 'Administrator',
}

export function displayName(me: Me): string {
  if (me.user) return me.user.name || me.user.email
  if (me.api_key) return `API key ${me.api_key.name ?? me.api_key.id}`
  return 'Unknown'
}
