import { type EventLoopUtilization, performance } from 'node:perf_hooks'

/** The event loop's utilization (the share of the time it spent running code, not waiting): lately and just now. */
export interface LoopUse {
  /** Averaged exponentially over about the time constant. */
  average: number
  /** Since the previous sample. */
  latest: number
}

/**
 * How busy this thread's event loop has been, read now and then: the utilization since the previous reading and
 * its exponential average, so that a caller can tell a burst of a tenth of a second from a second of saturation. A
 * few lines over perf_hooks, which gives the utilization between two readings but no average over time.
 */
export class LoopLoad {
  private last: EventLoopUtilization = performance.eventLoopUtilization()
  private average = 0

  constructor(private readonly timeConstantMs: number) {}

  sample(): LoopUse {
    const current = performance.eventLoopUtilization()
    const since = performance.eventLoopUtilization(current, this.last)
    this.last = current
    const elapsedMs = since.active + since.idle
    if (elapsedMs === 0) return { average: this.average, latest: this.average }
    this.average += (since.utilization - this.average) * (1 - Math.exp(-elapsedMs / this.timeConstantMs))
    return { average: this.average, latest: since.utilization }
  }
}
