// The service as one file (with a few chunks for what it loads on demand): Node 20 resolves, reads and links every
// ES module of a package one by one, which made start-up slow (bench/results/design-measurements.md). tsc still
// compiles and checks everything first (dist/src, which the tests and the client generators use); this bundles its
// output. The worker threads are entries of their own, beside aigov.js, where src/shared/thread-entry.ts finds them.
export default {
  input: {
    aigov: 'dist/src/cli/main.js',
    'webhook-sender-thread': 'dist/src/modules/webhooks/webhook-sender-thread.js',
    'sqlite-checkpointer-thread': 'dist/src/db/sqlite-checkpointer-thread.js',
  },
  platform: 'node',
  external: [
    // A native addon, found by its package's own path at run time.
    /^better-sqlite3(\/|$)/,
    // Loaded only on the first visit to /docs and by the MCP transports; kept as the packages ship them.
    /^@scalar\//,
    /^@modelcontextprotocol\//,
    // The authorization server of /mcp, loaded with it.
    /^oidc-provider(\/|$)/,
  ],
  output: { dir: 'dist/service', format: 'esm', sourcemap: true, cleanDir: true },
}
