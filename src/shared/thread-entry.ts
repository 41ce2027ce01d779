import { fileURLToPath } from 'node:url'

/**
 * The file a worker thread named `name` runs, for the module at `from` (its import.meta.url). In the build the
 * thread's compiled module sits beside its caller: tsc emits it next to it in dist/src, and rolldown bundles it
 * as an entry of its own next to dist/service/aigov.js. From the sources (vitest runs the .ts files, and Node 20
 * cannot run TypeScript in a thread) it is the copy test/global-setup.ts bundles into dist/threads before any test.
 */
export function threadEntry(name: string, from: string): URL {
  if (!from.endsWith('.ts')) return new URL(`./${name}.js`, from)
  const path = fileURLToPath(from)
  const root = path.slice(0, path.lastIndexOf('/src/'))
  return new URL(`file://${root}/dist/threads/${name}.js`)
}

/** The thread modules by name and source, which rolldown.config.mjs and test/global-setup.ts both bundle. */
export const THREAD_SOURCES = {
  'webhook-sender-thread': 'src/modules/webhooks/webhook-sender-thread.ts',
  'sqlite-checkpointer-thread': 'src/db/sqlite-checkpointer-thread.ts',
} as const
