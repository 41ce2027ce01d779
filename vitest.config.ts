import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'client/test/**/*.test.ts', 'console/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A worker keeps the modules it loaded for its next file: loading the service again for each of ~100 files cost
    // more than the tests themselves. Files share no state beyond that (each opens its own database and ports).
    isolate: false,
    // Vitest's default is one worker fewer than the cores: one on a 2-core CI machine, where the files, most of them
    // waiting on sockets and databases, then ran one after another.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
})
