/**
 * The one check of every URL field a client sends (vendor website, evidence link, webhook target): an http:// or
 * https:// address with a host, nothing else (no javascript:, data:, file:, mailto:, …). Registered as the
 * `http-url` JSON Schema format, so the schemas of every family refuse it with a 422 naming the field.
 */
export const HTTP_URL_FORMAT = 'http-url'

export const HTTP_URL_MESSAGE =
  'must be an http:// or https:// URL with a host (no control characters, no spaces around it)'

/** True when `raw` is an http(s) URL with a host, spelled plainly. */
export function isHttpUrl(raw: string): boolean {
  // A browser drops tabs and newlines inside a URL and trims its ends ("java\tscript:" still runs): refuse them.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(raw) || raw.trim() !== raw) return false
  // WHATWG parsing reads "http:host" and "http:\\host" as http://host/; only the plain spelling is taken.
  if (!/^https?:\/\//i.test(raw)) return false
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    return false
  }
  return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== ''
}

/** Secrets callers put in URLs (query tokens, a sign-in link's path), hidden from logs. */
const SECRET_QUERY = /([?&][^=&#]*(?:token|key|secret|password|signature)[^=&#]*=)[^&#]*/gi

/** A one-time sign-in link carries its secret in the path. */
const SECRET_PATH = /(\/auth\/link\/)[^/?#]+/g

/** The OpenID Connect callback's authorization code and state (the code is redeemable until it is used). */
const CALLBACK_SECRETS = /([?&](?:code|state)=)[^&#]*/g

export function redactQuery(url: string): string {
  const out = url.replace(SECRET_QUERY, '$1[redacted]').replace(SECRET_PATH, '$1[redacted]')
  return out.startsWith('/auth/oidc/callback') ? out.replace(CALLBACK_SECRETS, '$1[redacted]') : out
}
