import SQLite from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import type { CheckpointerData } from './sqlite-checkpointer.js'

// The checkpointing thread (started by startCheckpointer): a connection of its own copies the log back until told to stop.

const port = parentPort!
const data = workerData as CheckpointerData
const db = new SQLite(data.path, { timeout: data.restartWaitMs })
const pageSize = db.pragma('page_size', { simple: true }) as number
const timer = setInterval(() => {
  const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[]
  if (log * pageSize > data.restartBytes) db.pragma('wal_checkpoint(RESTART)')
}, data.intervalMs)
port.once('message', () => {
  clearInterval(timer)
  db.close()
  port.close()
})
