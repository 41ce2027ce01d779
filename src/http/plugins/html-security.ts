import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'

/**
 * The policy of a page that needs nothing but its own inline styles (the dossier): no scripts, nothing fetched.
 * Also what an HTML answer gets when its route names no policy of its own.
 */
export const STATIC_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

/** Never framed (clickjacking): said in both headers, for browsers that know only one of them. */
const FRAME_ANCESTORS = "frame-ancestors 'none'"

/**
 * Every HTML answer, of any route (a cached one included), leaves with a Content-Security-Policy that forbids
 * framing, no Referer for the links it holds, and no MIME sniffing. A route may set a policy of its own (the API
 * reference needs its script); this adds `frame-ancestors 'none'` to it when it lacks one.
 */
export function installHtmlSecurity(app: FastifyInstance): void {
  app.addHook('onSend', (_req, reply, payload, done) => {
    const type = reply.getHeader('content-type')
    if (typeof type !== 'string' || !type.startsWith('text/html')) return done(null, payload)
    const own = reply.getHeader('content-security-policy')
    const policy = typeof own === 'string' && own !== '' ? own : STATIC_PAGE_CSP
    reply.header(
      'content-security-policy',
      /(^|;)\s*frame-ancestors\s/.test(policy) ? policy : `${policy}; ${FRAME_ANCESTORS}`,
    )
    reply.header('x-frame-options', 'DENY')
    reply.header('referrer-policy', 'no-referrer')
    reply.header('x-content-type-options', 'nosniff')
    done(null, payload)
  })
}

/** `'sha256-…'` sources for each inline `<script>` of a page, so a policy can allow exactly those and no others. */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = []
  for (const match of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/\bsrc\s*=/i.test(match[1])) continue
    hashes.push(`'sha256-${createHash('sha256').update(match[2]).digest('base64')}'`)
  }
  return hashes
}
