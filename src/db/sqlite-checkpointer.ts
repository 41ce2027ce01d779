import type SQLite from 'better-sqlite3'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** How often the log is copied back: the log holds about this long's writes. */
const CHECKPOINT_MS = 250
/** The size the log file is cut back to after a burst of writes made it larger; past it, the log is started over. */
const WAL_SIZE_LIMIT = 32 * 1024 * 1024
/** The longest a checkpoint that starts the log over waits for the write lock and for readers (and holds writers). */
const RESTART_WAIT_MS = 50

// The thread's code, given as text with the driver's resolved path so that it runs the same from the build and
// from the sources (tests); a connection of its own copies the log back until told to stop.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.driver)
const db = new SQLite(workerData.path, { timeout: workerData.restartWaitMs })
const pageSize = db.pragma('page_size', { simple: true })
const timer = setInterval(() => {
  const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)')
  if (log * pageSize > workerData.restartBytes) db.pragma('wal_checkpoint(RESTART)')
}, workerData.intervalMs)
parentPort.once('message', () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

/**
 * SQLite in WAL mode copies the log back into the database file (a checkpoint, with an fsync) inside whichever
 * commit crosses 1000 logged pages: under a steady write load that was about half of every write's time. Here a
 * worker thread with its own connection checkpoints every CHECKPOINT_MS instead, so commits only append to the log,
 * and the API's thread never waits for the disk. PASSIVE checkpoints never wait for readers or writers; what a
 * long reader still needs is copied on a later turn. But under writes that never pause, a PASSIVE checkpoint never
 * catches up with the log's end, and only a fully copied log is started over: the log grew by every commit (1.4 GB
 * in 10 s of creates), and each page appended to the file cost the kernel a page to zero (14 % of all CPU). So once
 * the log is past WAL_SIZE_LIMIT, a RESTART checkpoint follows the PASSIVE one: with the bulk copied, it holds
 * writers only while it copies what came meanwhile (at most RESTART_WAIT_MS waiting), and the next commit starts
 * the log over, overwriting pages already in memory. Should the thread fail, the connection checkpoints itself
 * again as before. Durability is unchanged: a commit is in the log, and a checkpoint only moves it.
 */
export function startCheckpointer(sqlite: SQLite.Database, path: string): () => Promise<void> {
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`)
  sqlite.pragma('wal_autocheckpoint = 0')
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      driver,
      path,
      intervalMs: CHECKPOINT_MS,
      restartBytes: WAL_SIZE_LIMIT,
      restartWaitMs: RESTART_WAIT_MS,
    },
  })
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
