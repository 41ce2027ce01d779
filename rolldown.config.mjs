// The service as one file (with a few chunks for what it loads on demand): Node 20 resolves, reads and links
// every ES module of a package one by one, and the ~1 000 modules of the compiled service and its
// dependencies took about 1 s of every start, two thirds of the time to /readyz. tsc still compiles and checks
// everything first (dist/src, which the tests and the client generators use); this bundles its output.
export default {
  input: { aigov: 'dist/src/cli/main.js' },
  platform: 'node',
  external: [
    // A native addon, found by its package's own path at run time.
    /^better-sqlite3(\/|$)/,
    // Loaded only on the first visit to /docs and by the MCP transports; kept as the packages ship them.
    /^@scalar\//,
    /^@modelcontextprotocol\//,
  ],
  output: { dir: 'dist/service', format: 'esm', sourcemap: true, cleanDir: true },
}
