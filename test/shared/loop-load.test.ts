import { describe, expect, it } from 'vitest'
import { LoopLoad } from '../../src/shared/loop-load.js'

/** Runs code for `ms`, in chunks with a turn of the loop between them, as a busy service does. */
async function busyFor(ms: number): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    for (const chunk = Date.now() + 20; Date.now() < chunk; );
    await new Promise((resolve) => setImmediate(resolve))
  }
}

describe('the event loop load', () => {
  it('tells a burst from a sustained load, and sees the load end at once', async () => {
    const load = new LoopLoad(500)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(load.sample().latest).toBeLessThan(0.2)
    await busyFor(100)
    const burst = load.sample()
    expect(burst.latest).toBeGreaterThan(0.9)
    expect(burst.average).toBeLessThan(0.5)
    await busyFor(1500)
    expect(load.sample().average).toBeGreaterThan(0.9)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const after = load.sample()
    expect(after.latest).toBeLessThan(0.2)
    expect(after.average).toBeGreaterThan(after.latest)
  })
})
