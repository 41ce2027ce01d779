import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// Served by the service at /console; everything it loads comes from there (no CDN, no inline script).
export default defineConfig({
  base: '/console/',
  plugins: [react()],
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
