import { describe, expect, it } from 'vitest'
import { CoalescedRuns } from '../../src/shared/coalesced-runs.js'

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('coalesced runs', () => {
  it('serves the asks made while a run is scheduled with that run, and those made during it with one more', async () => {
    let runs = 0
    let release: () => void = () => undefined
    const work = async () => {
      runs++
      await new Promise<void>((resolve) => (release = resolve))
    }
    const loop = new CoalescedRuns(work, () => 10)
    loop.request()
    loop.request()
    await tick(30)
    expect(runs).toBe(1)
    loop.request()
    loop.request()
    release()
    await tick(30)
    expect(runs).toBe(2)
    release()
    await tick(30)
    expect(runs).toBe(2)
    await loop.stop()
  })

  it('runs again for an ask the work itself makes, never two at once, and starts nothing once stopped', async () => {
    let runs = 0
    let active = 0
    let mostAtOnce = 0
    const loop = new CoalescedRuns(
      async () => {
        mostAtOnce = Math.max(mostAtOnce, ++active)
        if (++runs < 3) loop.request()
        await tick(5)
        active--
      },
      () => 0,
    )
    loop.request()
    await tick(80)
    expect(runs).toBe(3)
    expect(mostAtOnce).toBe(1)
    await loop.stop()
    loop.request()
    await tick(20)
    expect(runs).toBe(3)
  })
})
