import { type Kysely, sql } from 'kysely'
import {
  answerCommitted,
  type GroupOutcome,
  type Member,
  MemberFailed,
  type MemberSavepoints,
  runMembers,
  type TransactionOptions,
} from './group-members.js'
import type { Tables } from './tables.js'
import { LOCKING_READS } from './locking-reads.js'

type Work<T> = (tx: Kysely<Tables>) => Promise<T>

interface Job extends Member {
  group: string | undefined
  locks: readonly string[]
  queuedAt: number
  /** Times a deadlock with another group has sent it back to the queue. */
  retries: number
}

/**
 * A key's jobs waiting for a group, and its groups under way with the rows they lock (lock keys: no two groups under
 * way share one, since a job naming a locked row waits).
 */
interface GroupState {
  queue: Job[]
  running: number
  scheduled: boolean
  locked: Set<string>
}

/** Transactions committed together at most: the members run one after another, so a large group is a slow one. */
const MAX_GROUP = 16
/**
 * Groups of one key under way at once. The jobs that arrive meanwhile wait and go together in the next group: a
 * group's members run one after another, so two at once keep a busy tenant's work going while one of them holds
 * the chain head, and the wait is what makes the groups of a steady stream of writes large. Each group costs four
 * round trips of its own (begin, the head's read, the append, commit), so more groups at once make smaller groups
 * and cost more round trips than they save (npm run bench's PATCH mix; bench/results/design-measurements.md).
 */
const GROUPS_IN_FLIGHT = 2
/**
 * Groups under way at once over all keys, as a share of the pool's connections: the others stay free for reads. With
 * every connection taken by writes, each read (a cached GET's check of its tenant's head too) queued behind them;
 * held to 6 of 10, groups also grow larger, and each write costs less (bench/results/design-measurements.md).
 */
const WRITE_SHARE = 0.6
/**
 * The longest a job waits for its group to start, as long as the pool lets a request wait for a free connection:
 * a tenant whose writes come faster than its share of connections can take them gets 503s, not ever longer waits.
 */
const QUEUE_TIMEOUT_MS = 2000
/** A member a deadlock took out of its group waits for a later group this many times, then fails as before. */
const DEADLOCK_RETRIES = 3
const DEADLOCK_DETECTED = '40P01'

/**
 * PostgreSQL transactions of the same group (a tenant's mutations) that start in the same turn of the event loop,
 * or while GROUPS_IN_FLIGHT of the group's are under way, committed together on one pooled connection; transactions
 * without a group run alone. A tenant's mutations all end by appending to its audit chain, whose head row stays
 * locked from that append to the commit: with one append per transaction, the tenant's writes would take turns
 * holding it for two round trips and a commit each, the service mostly idle. Together, a group holds it once for all
 * of its members, whose audit records the `finish` step appends in one statement.
 *
 * A member that fails is answered with its own error and the others commit without it (see runGroup); each is
 * answered only once the group has committed. Members of two groups may lock the same rows in crossing order, which
 * alone they would not have: PostgreSQL breaks such a deadlock by failing one statement (after its
 * deadlock_timeout, 1 s by default), and that member is tried again in a later group, after the one it waited for
 * has committed.
 *
 * Written here because node-postgres has no group commit of its own.
 */
export function groupCommitPostgres(
  db: Kysely<Tables>,
  poolSize: number,
): <T>(work: Work<T>, options?: TransactionOptions<T>) => Promise<T> {
  const queues = new Map<string, GroupState>()
  const maxWriting = Math.max(1, Math.floor(poolSize * WRITE_SHARE))
  /** Groups under way over all keys. */
  let writing = 0
  /** Keys whose next group waits for a group of any key to end, longest waiting first: the next one freed is theirs. */
  const waitingForSlot = new Set<string>()
  const hasSlot = (group: string) =>
    writing < maxWriting && (waitingForSlot.size === 0 || waitingForSlot.values().next().value === group)
  /** Gives a freed slot to the key that has waited longest for one. */
  const handOnSlot = () => {
    for (const group of waitingForSlot) {
      const state = queues.get(group)
      if (state && state.queue.length > 0) return schedule(group, state)
      waitingForSlot.delete(group)
    }
  }

  /**
   * A group runs first without savepoints, which cost a round trip per member: members rarely fail once their
   * request is valid. When one does, the group is rolled back and the others run again at once, each in a savepoint
   * this time, so a group runs at most twice. The member that failed is answered with the others (`failedBefore`):
   * its failure may come from one of their writes.
   */
  const runGroup = async (jobs: Job[], isolated = false, failedBefore: [Member, unknown][] = []): Promise<void> => {
    const later: Job[] = []
    let outcome: GroupOutcome = { done: [], failed: [] }
    try {
      await db.connection().execute(async (tx) => {
        await sql`begin`.execute(tx)
        try {
          outcome = await runMembers(tx.withPlugin(LOCKING_READS), jobs, isolated ? savepoints(tx, later) : undefined)
          await sql`commit`.execute(tx)
        } catch (err) {
          await sql`rollback`.execute(tx).catch(() => undefined)
          throw err
        }
      })
    } catch (err) {
      if (!(err instanceof MemberFailed)) {
        for (const job of [...jobs, ...failedBefore.map(([member]) => member)]) job.reject(err)
        return
      }
      const failed = err.member as Job
      if (!retryLater(failed, err.cause, later)) failedBefore = [...failedBefore, [failed, err.cause]]
      for (const job of later) enqueue(job)
      return runGroup(
        jobs.filter((job) => job !== failed),
        true,
        failedBefore,
      )
    }
    answerCommitted({ done: outcome.done, failed: [...failedBefore, ...outcome.failed] })
    for (const job of later) enqueue(job)
  }

  /** A member that failed on a deadlock with another group waits for a later group, a few times, instead of failing. */
  const retryLater = (job: Job, err: unknown, later: Job[]): boolean => {
    if ((err as { code?: unknown } | null)?.code !== DEADLOCK_DETECTED || job.retries >= DEADLOCK_RETRIES) return false
    job.retries += 1
    job.queuedAt = Date.now()
    later.push(job)
    return true
  }

  const savepoints = (tx: Kysely<Tables>, later: Job[]): MemberSavepoints => ({
    begin: async () => void (await sql`savepoint member`.execute(tx)),
    release: async () => void (await sql`release savepoint member`.execute(tx)),
    // Statements without parameters go as one simple query: two statements in one round trip.
    next: async () => void (await sql`release savepoint member; savepoint member`.execute(tx)),
    rollback: async () => void (await sql`rollback to savepoint member; release savepoint member`.execute(tx)),
    // A lost connection fails the rollback to the savepoint as well, and that failure takes the group.
    endsGroup: () => false,
    retryLater: (member, err) => retryLater(member as Job, err, later),
  })

  const flush = (group: string) => {
    const state = queues.get(group)
    if (!state) return
    state.scheduled = false
    const now = Date.now()
    state.queue = state.queue.filter((job) => {
      if (now - job.queuedAt <= QUEUE_TIMEOUT_MS) return true
      job.reject(queueTimeout())
      return false
    })
    while (state.running < GROUPS_IN_FLIGHT && state.queue.length > 0) {
      if (!hasSlot(group)) {
        waitingForSlot.add(group)
        // A slot is free, but another key is first in line: it takes it now, not once some group ends.
        if (writing < maxWriting) handOnSlot()
        return
      }
      waitingForSlot.delete(group)
      const jobs = nextGroup(state)
      if (jobs.length === 0) break
      const locks = jobs.flatMap((job) => job.locks)
      for (const key of locks) state.locked.add(key)
      state.running += 1
      writing += 1
      void runGroup(jobs).finally(() => {
        state.running -= 1
        writing -= 1
        for (const key of locks) state.locked.delete(key)
        handOnSlot()
        if (state.queue.length > 0) schedule(group, state)
        else if (state.running === 0) queues.delete(group)
      })
    }
    // Not waiting for a slot (its jobs are done, timed out, or wait for its own groups): the next in line may take one.
    waitingForSlot.delete(group)
    if (writing < maxWriting) handOnSlot()
  }

  /**
   * Takes the next group's jobs out of the queue, in order, leaving those that lock a row a group under way locks.
   * Such a job would wait for that group's commit holding its own group's locks, and two groups whose members lock
   * the same rows in crossing order deadlock (PostgreSQL's deadlock_timeout, 1 s, then a retry): concurrent PATCHes
   * of a few records of one tenant ran at 130-290 a second that way.
   */
  const nextGroup = (state: GroupState): Job[] => {
    const taken: Job[] = []
    const waiting: Job[] = []
    let next = 0
    for (; next < state.queue.length && taken.length < MAX_GROUP; next++) {
      const job = state.queue[next]
      if (job.locks.some((key) => state.locked.has(key))) waiting.push(job)
      else taken.push(job)
    }
    state.queue = [...waiting, ...state.queue.slice(next)]
    return taken
  }

  const schedule = (group: string, state: GroupState) => {
    if (state.scheduled) return
    state.scheduled = true
    // Requests parsed in this turn all reach here before the check phase: they join the group.
    setImmediate(flush, group)
  }

  const enqueue = (job: Job) => {
    if (job.group === undefined) return void runGroup([job])
    let state = queues.get(job.group)
    if (!state) queues.set(job.group, (state = { queue: [], running: 0, scheduled: false, locked: new Set() }))
    state.queue.push(job)
    if (state.running < GROUPS_IN_FLIGHT) schedule(job.group, state)
  }

  return <T>(work: Work<T>, options?: TransactionOptions<T>) =>
    new Promise<T>((resolve, reject) => {
      enqueue({
        work,
        finish: options?.finish as Member['finish'],
        resolve: resolve as (value: unknown) => void,
        reject,
        group: options?.group,
        locks: options?.locks ?? [],
        queuedAt: Date.now(),
        retries: 0,
      })
    })
}

/** PostgreSQL's "too many connections" code: the service answers 503 for it, as when the pool has none free. */
const queueTimeout = () =>
  Object.assign(new Error(`writes of this group waited over ${QUEUE_TIMEOUT_MS} ms for a connection`), {
    code: '53300',
  })
