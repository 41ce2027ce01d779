import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { isHttpUrl } from '../../shared/urls.js'
import type { ResolvedAddress, WebhookResolver } from './webhook-dns.js'

/** Global unicast IPv6 (RFC 4291 §2.4): what lies outside is reserved, unassigned or special, never a public host. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3')
/** IPv4-compatible addresses (RFC 4291 §2.5.5.1, deprecated): a dual-stack host may route them to the embedded IPv4. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96')
/** NAT64 local-use prefix (RFC 8215): where it embeds the IPv4 depends on the operator's prefix length. */
const NAT64_LOCAL_USE = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48')

const v4 = (high: number, low: number) => ipaddr.IPv4.parse(`${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`)

/**
 * The IPv4 addresses an IPv6 address reaches through a translation or tunnel (IPv4-mapped, -translated, NAT64,
 * 6to4, Teredo), undefined when it embeds none, or null when it embeds one that cannot be judged (refused).
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null | undefined {
  const p = address.parts
  if (address.match(NAT64_LOCAL_USE)) return null
  switch (address.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
    case 'rfc6052': // 64:ff9b::a.b.c.d
      return [v4(p[6], p[7])]
    case '6to4': // 2002:AABB:CCDD::/48
      return [v4(p[1], p[2])]
    case 'teredo': // 2001:0:server(32):flags:port:client(32, inverted)
      return [v4(p[2], p[3]), v4(~p[6] & 0xffff, ~p[7] & 0xffff)]
  }
  if (address.match(IPV4_COMPATIBLE)) return null
  return undefined
}

/**
 * Where a webhook may not point unless private networks are allowed: anything but the public unicast internet.
 * An allow-list: IPv4 that ipaddr.js calls `unicast` (so not loopback, RFC 1918, link-local incl. the
 * 169.254.169.254 metadata service, CGNAT, reserved, …), IPv6 in 2000::/3 that it calls `unicast`, and IPv6 that
 * embeds IPv4 only when every embedded IPv4 is itself public.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return ipaddr.IPv4.parse(address).range() === 'unicast'
  if (family !== 6) return false
  // ipaddr.js reads "::a.b.c.d" as IPv4-mapped; spelled in hex it is the IPv4-compatible address it is.
  const hex = address.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_m, a, b, c, d) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`,
  )
  const parsed = ipaddr.IPv6.parse(hex)
  const embedded = embeddedIPv4(parsed)
  if (embedded === null) return false
  if (embedded !== undefined) return embedded.every((a) => a.range() === 'unicast')
  return parsed.range() === 'unicast' && parsed.match(GLOBAL_UNICAST)
}

/** Why `url` cannot be a webhook target by its form alone, or null when it can. */
export function urlProblem(url: string): string | null {
  if (!isHttpUrl(url)) return 'must be an https:// or http:// URL with a host'
  const parsed = new URL(url)
  if (parsed.username || parsed.password) return 'must not carry credentials'
  return null
}

export class BlockedTargetError extends Error {
  readonly code = 'EBLOCKEDTARGET'
}

/** A URL's host as DNS and the address check take it: without IPv6 brackets. */
export const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '')

/**
 * Resolves `host` for `tenantId` (bounded: see WebhookResolver) and refuses it when any address is not public
 * (a name must not smuggle in a private one). Rejects with the resolver's error when there is no answer in time.
 */
export async function checkedAddresses(
  resolver: WebhookResolver,
  tenantId: string,
  host: string,
  allowPrivate: boolean,
): Promise<ResolvedAddress[]> {
  const addresses = await resolver.resolve(tenantId, host)
  const blocked = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address))
  if (blocked !== undefined)
    throw new BlockedTargetError(
      `${host} resolves to ${blocked.address}, a private, loopback, link-local or reserved address`,
    )
  return addresses
}
