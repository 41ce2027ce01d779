import type { Config } from '../../config.js'
import { loadStarterLibrary } from '../library/library.service.js'
import type { TenantProvisioner } from './tenants.service.js'

/** What every new tenant gets inside its creating transaction, by setting. */
export function tenantProvisioners(config: Pick<Config, 'starterLibrary'>): TenantProvisioner[] {
  const provisioners: TenantProvisioner[] = []
  if (config.starterLibrary) provisioners.push(async (tx, ctx) => (await loadStarterLibrary(tx, ctx)).audit)
  return provisioners
}
