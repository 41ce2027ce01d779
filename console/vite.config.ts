import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import react from '@vitejs/plugin-react'
import { defineConfig, type Plugin } from 'vite'

const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt'])

/**
 * Writes a .br and a .gz beside every text file of the build, so the service sends them as they are and spends
 * nothing on compression when it starts (zlib does the work: a plugin package would only wrap these lines).
 */
function precompress(): Plugin {
  return {
    name: 'aigov-precompress',
    apply: 'build',
    writeBundle(options) {
      const walk = (dir: string) => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name)
          if (statSync(path).isDirectory()) walk(path)
          else if (COMPRESSIBLE.has(extname(name))) {
            const raw = readFileSync(path)
            if (raw.length <= 512) continue
            writeFileSync(`${path}.br`, brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
            writeFileSync(`${path}.gz`, gzipSync(raw, { level: 9 }))
          }
        }
      }
      walk(options.dir ?? 'dist')
    },
  }
}

// Served by the service at /console; everything it loads comes from there (no CDN, no inline script).
export default defineConfig({
  base: '/console/',
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The CSP forbids inline script: the module preload polyfill would be one.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 800,
  },
})
