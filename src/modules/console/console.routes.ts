import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, extname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'

/**
 * The console's policy: its own scripts only (no inline script, no eval), its own styles plus the inline styles
 * the component library sets on elements, calls to this service only, never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
}

interface Asset {
  type: string
  raw: Buffer
  br?: Buffer
  gzip?: Buffer
  immutable: boolean
}

/** The built console (console/dist), found from this module whether it runs from src/, dist/src/ or dist/service/. */
export function findConsoleDir(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'console', 'dist')
    if (existsSync(join(candidate, 'index.html'))) return candidate
    dir = dirname(dir)
  }
  return undefined
}

/** Every file of the build, read once at start with the .br and .gz the console's build wrote beside it. */
function loadAssets(root: string): Map<string, Asset> {
  const assets = new Map<string, Asset>()
  const sibling = (path: string) => (existsSync(path) ? readFileSync(path) : undefined)
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) {
        walk(path)
        continue
      }
      const type = TYPES[extname(name)]
      if (!type) continue
      const url = relative(root, path).split(sep).join('/')
      assets.set(url, {
        type,
        raw: readFileSync(path),
        br: sibling(`${path}.br`),
        gzip: sibling(`${path}.gz`),
        // Vite names what it builds under assets/ by content hash: those never change under their name.
        immutable: url.startsWith('assets/'),
      })
    }
  }
  walk(root)
  return assets
}

function send(req: FastifyRequest, reply: FastifyReply, asset: Asset) {
  const accept = String(req.headers['accept-encoding'] ?? '')
  reply.header('content-type', asset.type)
  reply.header('vary', 'accept-encoding')
  reply.header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
  reply.header('x-content-type-options', 'nosniff')
  if (asset.type.startsWith('text/html')) reply.header('content-security-policy', CONSOLE_CSP)
  if (asset.br && /\bbr\b/.test(accept)) return reply.header('content-encoding', 'br').send(asset.br)
  if (asset.gzip && /\bgzip\b/.test(accept)) return reply.header('content-encoding', 'gzip').send(asset.gzip)
  return reply.send(asset.raw)
}

/**
 * The governance console at /console: the built single-page application, its index for every page path (the
 * application routes in the browser), and `/` sending a browser there. Without a build, /console says how to make one.
 */
export function consoleRoutes(dir: string | undefined = findConsoleDir()): FastifyPluginAsync {
  return async (app) => {
    const assets = dir ? loadAssets(dir) : new Map<string, Asset>()
    const index = assets.get('index.html')
    const opts = { config: { public: true }, schema: { hide: true } }

    app.get('/', opts, async (req, reply) => {
      // Browsers ask for HTML; API clients and probes that ask for JSON get the service's description instead.
      if (!String(req.headers.accept ?? '').includes('text/html'))
        return reply.send({ service: 'aigov-integration-service', console: '/console', api: '/api/v1/integration' })
      return reply.redirect('/console/', 302)
    })
    const page = async (req: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
      // Relative asset and page paths resolve against /console/, so the bare path moves there first.
      if (req.url === '/console' || req.url.startsWith('/console?'))
        return reply.redirect(`/console/${req.url.slice(8)}`, 301)
      const path = req.params['*'] ?? ''
      const asset = assets.get(path)
      if (asset && path !== 'index.html') return send(req, reply, asset)
      if (path.startsWith('assets/') || extname(path) !== '') {
        return reply.code(404).type('text/plain; charset=utf-8').send('not found')
      }
      if (!index) {
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('the console is not built: run `npm run build` in the service folder')
      }
      return send(req, reply, index)
    }
    // With ignoreTrailingSlash, /console/ is routed here too: `page` tells the two apart by the URL.
    app.get('/console', opts, page)
    app.get('/console/*', opts, page)
  }
}
