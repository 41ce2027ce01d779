/**
 * Background work that events ask for (commits, timers, finished sends), run at most once at a time: asks while a
 * run is scheduled join it, and asks while one runs make one more run after it. The webhook dispatcher's turns and
 * the audit name indexer's rounds are both this, each with its own delay.
 *
 * Written here because it is a dozen lines that no scheduling library shapes this way (a delay chosen when the
 * run is scheduled, one run at a time, asks never lost).
 */
export class CoalescedRuns {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private again = false
  private stopped = false

  /** `work` must not reject; `delayMs` is read when a run is scheduled. */
  constructor(
    private readonly work: () => Promise<void>,
    private readonly delayMs: () => number,
  ) {}

  /** Asks for a run: a scheduled one serves it, else one after the run under way, else one in delayMs(). */
  readonly request = (): void => {
    if (this.stopped || this.timer) return
    if (this.running) {
      this.again = true
      return
    }
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.again = false
      // Started in a microtask, so that a request made by the work itself finds it running.
      this.running = Promise.resolve()
        .then(this.work)
        .finally(() => {
          this.running = undefined
          if (this.again) this.request()
        })
    }, this.delayMs())
  }

  /** Starts no more runs; resolves once the one under way, if any, has ended. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
    await this.running
  }
}
