import type SQLite from 'better-sqlite3'
import { Worker } from 'node:worker_threads'
import { threadEntry } from '../shared/thread-entry.js'

/** How often the log is copied back: the log holds about this long's writes. */
const CHECKPOINT_MS = 250
/** The size the log file is cut back to after a burst of writes made it larger; past it, the log is started over. */
const WAL_SIZE_LIMIT = 32 * 1024 * 1024
/** The longest a checkpoint that starts the log over waits for the write lock and for readers (and holds writers). */
const RESTART_WAIT_MS = 50

/** What the checkpointing thread (sqlite-checkpointer-thread.ts) is started with. */
export interface CheckpointerData {
  path: string
  intervalMs: number
  restartBytes: number
  restartWaitMs: number
}

/**
 * SQLite in WAL mode checkpoints (copies the log back into the database file, with an fsync) inside whichever
 * commit crosses 1000 logged pages, so a steady write load pays for the disk on the API's thread. Here a worker
 * thread with its own connection checkpoints every CHECKPOINT_MS instead, and commits only append to the log.
 * PASSIVE checkpoints never wait for readers or writers, but under writes that never pause they never reach the
 * log's end, and only a fully copied log is started over: the log would grow without bound, each new page costing
 * the kernel a page to zero. So once the log is past WAL_SIZE_LIMIT a RESTART checkpoint follows, holding writers
 * only while it copies what came meanwhile (at most RESTART_WAIT_MS waiting); the next commit starts the log over.
 * Should the thread fail, the connection checkpoints itself again. Durability is unchanged: a checkpoint only moves
 * what a commit put in the log. Measured in bench/results/design-measurements.md.
 */
export function startCheckpointer(sqlite: SQLite.Database, path: string): () => Promise<void> {
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`)
  sqlite.pragma('wal_autocheckpoint = 0')
  const workerData: CheckpointerData = {
    path,
    intervalMs: CHECKPOINT_MS,
    restartBytes: WAL_SIZE_LIMIT,
    restartWaitMs: RESTART_WAIT_MS,
  }
  const worker = new Worker(threadEntry('sqlite-checkpointer-thread', import.meta.url), { workerData })
  let stopping = false
  worker.on('error', () => undefined)
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      if (!stopping && sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000')
      resolve()
    }),
  )
  worker.unref()
  return async () => {
    stopping = true
    // Held open until the thread has closed its connection (unreferenced, it would not keep the process waiting).
    worker.ref()
    worker.postMessage('stop')
    await exited
  }
}
