import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import {
  answerCommitted,
  type GroupOutcome,
  type Member,
  type MemberSavepoints,
  runMembers,
  type TransactionOptions,
} from './group-members.js'
import type { Tables } from './tables.js'

type Work<T> = (tx: Kysely<Tables>) => Promise<T>

interface Job extends Member {
  /** When waiting for another connection's write lock ends in SQLITE_BUSY. */
  deadline: number
}

/** Transactions committed together at most; a bigger burst commits in several groups. */
const MAX_GROUP = 64
/** How often a group asks again for a write lock another connection holds. */
const BUSY_RETRY_MS = 1

/**
 * SQLite transactions that start in the same turn of the event loop, committed together. A commit appends every
 * page its transaction changed to the write-ahead log, and a single create changes the same few pages as twenty
 * (the audit table's indexes, the chain head), so grouped commits cost a fraction of lone ones per write
 * (design-measurements.md, "SQLite group commit"). Each transaction runs in a savepoint of its own
 * within the group's, so one that fails is rolled back alone (runMembers); each is answered only once the group
 * has committed, so nothing is acknowledged before it is durable. The group holds the one connection from its
 * begin to its commit, as a lone transaction did, so no other query ever sees a member's uncommitted rows.
 *
 * The write lock is asked for without waiting. While another connection holds it (the checkpointer starting the log
 * over, a CLI write), the group asks again every BUSY_RETRY_MS from a timer, and the thread goes on answering
 * reads: SQLite's own wait sleeps on the thread in steps of up to 25 ms, stalling every request meanwhile. A member waits at most `busyTimeoutMs` in all, as
 * `busy_timeout` had it, then fails with SQLITE_BUSY.
 *
 * Written here because SQLite has no group commit of its own and no library adds one to better-sqlite3.
 */
export function groupCommit(
  db: Kysely<Tables>,
  sqlite: SQLite.Database,
  busyTimeoutMs: number,
): <T>(work: Work<T>, options?: TransactionOptions<T>) => Promise<T> {
  // Taken up front, so another process's writer makes the group wait instead of failing mid-way.
  const begin = sqlite.prepare('begin immediate')
  const savepoint = sqlite.prepare('savepoint member')
  const release = sqlite.prepare('release member')
  const rollbackMember = sqlite.prepare('rollback to member')
  const commit = sqlite.prepare('commit')
  const savepoints: MemberSavepoints = {
    begin: () => void savepoint.run(),
    release: () => void release.run(),
    next: () => {
      release.run()
      savepoint.run()
    },
    rollback: () => {
      rollbackMember.run()
      release.run()
    },
    // A failure SQLite answers by ending the whole transaction (a full disk, an I/O error) takes the group.
    endsGroup: () => !sqlite.inTransaction,
  }
  let queue: Job[] = []
  let retry: NodeJS.Timeout | undefined

  /**
   * Begins the group's transaction if the write lock is free now; false if another connection holds it. The pragma
   * is run anew each time: a prepared PRAGMA statement takes its value when prepared, not when run.
   */
  const tryBegin = (): boolean => {
    sqlite.pragma('busy_timeout = 0')
    try {
      begin.run()
      return true
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return false
      throw err
    } finally {
      sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`)
    }
  }

  /** Puts a group whose lock was busy back in front of the queue, failing the members that waited long enough. */
  const waitForLock = (jobs: Job[]) => {
    const now = Date.now()
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
    for (const job of jobs) if (job.deadline <= now) job.reject(busy)
    queue = [...jobs.filter((job) => job.deadline > now), ...queue]
    retry ??= setTimeout(() => {
      retry = undefined
      flush()
    }, BUSY_RETRY_MS)
  }

  const runGroup = async (jobs: Job[]): Promise<void> => {
    let outcome: GroupOutcome = { done: [], failed: [] }
    let locked = true
    try {
      await db.connection().execute(async (tx) => {
        if (!(locked = tryBegin())) return
        try {
          outcome = await runMembers(tx, jobs, savepoints)
          commit.run()
        } catch (err) {
          if (sqlite.inTransaction) sqlite.exec('rollback')
          throw err
        }
      })
    } catch (err) {
      for (const job of jobs) job.reject(err)
      return
    }
    if (!locked) return waitForLock(jobs)
    answerCommitted(outcome)
  }

  const flush = () => {
    if (retry) return
    const jobs = queue.splice(0, MAX_GROUP)
    if (queue.length > 0) setImmediate(flush)
    if (jobs.length > 0) void runGroup(jobs)
  }

  return <T>(work: Work<T>, options?: TransactionOptions<T>) =>
    new Promise<T>((resolve, reject) => {
      const job: Job = {
        work,
        finish: options?.finish as Member['finish'],
        resolve: resolve as (value: unknown) => void,
        reject,
        deadline: Date.now() + busyTimeoutMs,
      }
      // Requests parsed in this turn all reach here before the check phase: they make up the group.
      if (queue.push(job) === 1) setImmediate(flush)
    })
}
