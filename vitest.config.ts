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
    // Files mostly wait on sockets, databases, child processes and timers, so twice as many workers as cores keep
    // the cores busy (Vitest's default, one fewer than the cores, ran them one after another on 2 cores).
    maxWorkers: Math.max(4, 2 * availableParallelism()),
  },
})
