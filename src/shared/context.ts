export type Role = 'read' | 'write' | 'admin'
export const ROLES: readonly Role[] = ['read', 'write', 'admin']
export type Source = 'api' | 'mcp' | 'cli' | 'system'

export interface Actor {
  type: 'user' | 'api_key' | 'system'
  id: string | null
  name: string | null
}

/** Who is acting, for which tenant, from where: travels from the auth hook into services and audit records. */
export interface Ctx {
  tenantId: string
  actor: Actor
  role: Role
  requestId: string | null
  source: Source
  /** How the caller proved who it is; absent for the service's own work. */
  via?: 'session' | 'api_key' | 'oauth'
  /** A person's signed-in browser session: its id, and the CSRF token its cookie writes must send. */
  session?: { id: string; csrfToken: string }
  /** The OAuth client an assistant acting for a person connected with: audit records name it in `metadata.client`. */
  client?: { id: string; name: string }
  /** When the caller's token or key lapses, ms since the epoch: answers that stay open (event streams) end there. */
  expiresAt?: number
}

export function systemCtx(tenantId: string, source: Source = 'system', requestId: string | null = null): Ctx {
  return { tenantId, actor: { type: 'system', id: null, name: 'system' }, role: 'admin', requestId, source }
}

export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed)
}
