import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'client/test/**/*.test.ts', 'console/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on a 2-core CI machine, where the files, most of them
    // waiting on sockets and databases, then ran one after another (~11 min; ~4 min with two workers).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
})
