import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Where a webhook may not point unless private networks are allowed: anything but the public unicast
 * internet (loopback, RFC 1918, link-local incl. the 169.254.169.254 metadata service, CGNAT, ULA, …).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  return parsed.range() === 'unicast'
}

/** Why `url` cannot be a webhook target by its form alone, or null when it can. */
export function urlProblem(url: string): string | null {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'is not a valid URL'
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must start with https:// or http://'
  if (parsed.username || parsed.password) return 'must not carry credentials'
  return null
}

export class BlockedTargetError extends Error {
  readonly code = 'EBLOCKEDTARGET'
}

/** Resolves `host` and refuses it when any address is not public (a name must not smuggle in a private one). */
export async function checkHost(host: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return
  const bare = host.replace(/^\[|\]$/g, '')
  const addresses = isIP(bare) ? [bare] : (await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(bare, { all: true }, (err, list) => (err ? reject(err) : resolve(list))))).map((a) => a.address)
  const blocked = addresses.find((a) => !isPublicAddress(a))
  if (blocked !== undefined) throw new BlockedTargetError(`${host} resolves to ${blocked}, a private, loopback, link-local or reserved address`)
}

/**
 * A socket lookup that refuses non-public addresses: checked on the address actually connected to,
 * so a DNS answer changing between the check and the connection (rebinding) cannot reach a private one.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, list) => {
      if (err) return (callback as (e: Error) => void)(err)
      const addresses = list as unknown as LookupAddress[]
      const blocked = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address))
      if (blocked) return (callback as (e: Error) => void)(new BlockedTargetError(`${hostname} resolves to ${blocked.address}, a private address`))
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses)
      callback(null, addresses[0].address, addresses[0].family)
    })
  }
}
