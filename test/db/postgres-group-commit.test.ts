import { type Kysely, sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../../src/db/create-db.js'
import { freshDatabase, POSTGRES_URL, type TestDatabase } from '../helpers/harness.js'

// On PostgreSQL, transactions of the same group (a tenant's mutations) that start together commit together. What
// must hold: each is answered only once it is committed, one that fails leaves no trace while the others commit,
// the finishing step sees exactly the members that succeeded, a member naming a row that a group under way locks
// waits for a later group, and a deadlock between two groups (which separate transactions would not have had) costs
// a wait, not a failure.

const suite = POSTGRES_URL ? describe : describe.skip
suite(`PostgreSQL group commit${POSTGRES_URL ? '' : ' — skipped: DATABASE_URL does not point at PostgreSQL'}`, () => {
  let fresh: TestDatabase
  let database: Database
  let other: pg.Client

  beforeAll(async () => {
    fresh = await freshDatabase('postgres')
    database = createDatabase(fresh.env.DATABASE_URL)
    await sql`create table notes (id integer primary key, body text not null unique)`.execute(database.db)
    other = new pg.Client({ connectionString: fresh.env.DATABASE_URL })
    await other.connect()
  })
  afterAll(async () => {
    await other?.end()
    await database?.close()
    await fresh?.drop()
  })
  beforeEach(async () => {
    await sql`delete from notes`.execute(database.db)
  })

  const insert = (tx: Kysely<any>, id: number, body = `note ${id}`) =>
    sql`insert into notes (id, body) values (${id}, ${body})`.execute(tx)
  /** What another connection sees committed. */
  const committedIds = async () =>
    (await other.query<{ id: number }>('select id from notes order by id')).rows.map((r) => r.id)

  it('commits transactions of one group started together as one, answering each once another connection sees it', async () => {
    const seenBySecond: number[][] = []
    const first = database.groupedTransaction(
      async (tx) => {
        await insert(tx, 1)
        return 'first'
      },
      { group: 'acme' },
    )
    const second = database.groupedTransaction(
      async (tx) => {
        await insert(tx, 2)
        seenBySecond.push(await committedIds())
        return 'second'
      },
      { group: 'acme' },
    )
    expect(await first).toBe('first')
    expect(await committedIds()).toEqual([1, 2])
    expect(await second).toBe('second')
    // The first one's row was written but not committed while the second ran: they shared one transaction.
    expect(seenBySecond).toEqual([[]])
  })

  it('keeps other groups and ungrouped transactions apart', async () => {
    const seen: number[][] = []
    await Promise.all([
      database.groupedTransaction((tx) => insert(tx, 1), { group: 'acme' }),
      database.groupedTransaction(
        async (tx) => {
          await insert(tx, 2)
          // Its own transaction, on another connection: it waits for nothing of the others to commit.
          await new Promise((r) => setTimeout(r, 100))
          seen.push(await committedIds())
        },
        { group: 'globex' },
      ),
    ])
    expect(seen[0]).toContain(1)
    await Promise.all([
      database.groupedTransaction((tx) => insert(tx, 3)),
      database.groupedTransaction((tx) => insert(tx, 4)),
    ])
    expect(await committedIds()).toEqual([1, 2, 3, 4])
  })

  it('rolls back a failing member alone: the others commit, it rejects with its own error', async () => {
    const results = await Promise.allSettled([
      database.groupedTransaction((tx) => insert(tx, 1, 'same'), { group: 'acme' }),
      database.groupedTransaction(
        async (tx) => {
          await insert(tx, 2)
          await insert(tx, 3, 'same')
        },
        { group: 'acme' },
      ),
      database.groupedTransaction(
        async (tx) => {
          await insert(tx, 4)
          throw new Error('changed its mind')
        },
        { group: 'acme' },
      ),
      database.groupedTransaction((tx) => insert(tx, 5), { group: 'acme' }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason.code).toBe('23505')
    expect((results[2] as PromiseRejectedResult).reason.message).toBe('changed its mind')
    expect(await committedIds()).toEqual([1, 5])
  })

  it('answers a failing member only once the others have committed: what made it fail is there for another connection to see', async () => {
    // The second conflicts with the first's row in their shared transaction, and the fourth with the third's in
    // the rerun, each in its savepoint. Told of its conflict, each caller looks for the row it conflicted with.
    const seenOnFailure: number[][] = []
    const failing = (id: number, body: string) =>
      database
        .groupedTransaction((tx) => insert(tx, id, body), { group: 'acme' })
        .catch(async (err) => {
          seenOnFailure.push(await committedIds())
          throw err
        })
    const results = await Promise.allSettled([
      database.groupedTransaction((tx) => insert(tx, 1, 'one'), { group: 'acme' }),
      failing(2, 'one'),
      database.groupedTransaction((tx) => insert(tx, 3, 'three'), { group: 'acme' }),
      failing(4, 'three'),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected'])
    expect(seenOnFailure).toEqual([
      [1, 3],
      [1, 3],
    ])
  })

  it('runs a group once when no member fails; after one fails, the others run once more, each in a savepoint', async () => {
    const runs = new Map<number, number>()
    const member = (id: number, fails = false) =>
      database.groupedTransaction(
        async (tx) => {
          runs.set(id, (runs.get(id) ?? 0) + 1)
          await insert(tx, id)
          if (fails) throw new Error(`${id} changed its mind`)
        },
        { group: 'acme' },
      )
    await Promise.all([member(1), member(2), member(3)])
    expect(Object.fromEntries(runs)).toEqual({ 1: 1, 2: 1, 3: 1 })

    runs.clear()
    // The first run stops at 5's failure, before 6; the second runs 4 again and 6, and the rolled-back 5 not at all.
    const once = await Promise.allSettled([member(4), member(5, true), member(6)])
    expect(once.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(Object.fromEntries(runs)).toEqual({ 4: 2, 5: 1, 6: 1 })

    runs.clear()
    // A failure in the second run is rolled back to its member's savepoint: no third run.
    const twice = await Promise.allSettled([member(7), member(8, true), member(9, true), member(10)])
    expect(twice.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled'])
    expect((twice[2] as PromiseRejectedResult).reason.message).toBe('9 changed its mind')
    expect(Object.fromEntries(runs)).toEqual({ 7: 2, 8: 1, 9: 1, 10: 1 })
    expect(await committedIds()).toEqual([1, 2, 3, 4, 6, 7, 10])
  })

  it('finishes once with the results of the members that succeeded, before the commit; a failing finish commits none', async () => {
    const finished: number[][] = []
    const finish = async (tx: Kysely<any>, ids: number[]) => {
      finished.push(ids)
      await insert(tx, 100 + ids.length)
    }
    const members = [1, 2, 3].map((id) =>
      database.groupedTransaction(
        async (tx) => {
          if (id === 2) throw new Error('no')
          await insert(tx, id)
          return id
        },
        { group: 'acme', finish },
      ),
    )
    await Promise.allSettled(members)
    expect(finished).toEqual([[1, 3]])
    expect(await committedIds()).toEqual([1, 3, 102])

    const failing = async () => {
      throw new Error('the audit log is unreachable')
    }
    const results = await Promise.allSettled(
      [4, 5].map((id) => database.groupedTransaction((tx) => insert(tx, id), { group: 'acme', finish: failing })),
    )
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(await committedIds()).toEqual([1, 3, 102])
  })

  it('commits every member of a burst larger than a group', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => i + 1)
    await Promise.all(ids.map((id) => database.groupedTransaction((tx) => insert(tx, id), { group: 'acme' })))
    expect(await committedIds()).toEqual(ids)
  })

  it("holds at most two connections for one group's burst, leaving the pool to the others", async () => {
    let busiest = 0
    const sampler = setInterval(() => {
      const stats = database.poolStats()!
      busiest = Math.max(busiest, stats.total - stats.idle)
    }, 1)
    const finished: string[] = []
    let burstStarted!: () => void
    const started = new Promise<void>((r) => (burstStarted = r))
    const burst = Array.from({ length: 120 }, (_, i) =>
      database
        .groupedTransaction(
          async (tx) => {
            burstStarted()
            await sql`select pg_sleep(0.002)`.execute(tx)
            await insert(tx, i + 1)
          },
          { group: 'acme' },
        )
        .then(() => finished.push('acme')),
    )
    // The other tenant's write starts once the burst's first member runs (a fixed delay could outlast the burst).
    await started
    const other = database
      .groupedTransaction((tx) => insert(tx, 1000), { group: 'globex' })
      .then(() => finished.push('globex'))
    await Promise.all([...burst, other])
    clearInterval(sampler)
    expect(busiest).toBeLessThanOrEqual(2 + 1)
    // Another tenant's write went through while the burst was still under way.
    expect(finished.indexOf('globex')).toBeLessThan(finished.length - 1)
    expect(await committedIds()).toHaveLength(121)
  })

  it("holds at most 6 of the pool's 10 connections for all groups' writes, leaving reads theirs; waiting groups go first come, first served", async () => {
    // Twelve tenants' writes, each held open until released: six run, six wait for a slot.
    const release: (() => void)[] = []
    const started: string[] = []
    const tenants = Array.from({ length: 12 }, (_, i) => `tenant-${String(i).padStart(2, '0')}`)
    const writes: Promise<unknown>[] = []
    const until = async (done: () => boolean) => {
      for (let waited = 0; !done(); waited += 10) {
        if (waited > 5000) throw new Error(`timed out; started: ${started.join(', ')}`)
        await new Promise((r) => setTimeout(r, 10))
      }
    }
    try {
      for (const [i, tenant] of tenants.entries()) {
        writes.push(
          database.groupedTransaction(
            async (tx) => {
              started.push(tenant)
              await insert(tx, i + 1)
              await new Promise<void>((r) => release.push(r))
            },
            { group: tenant },
          ),
        )
        // Each in a turn of its own, so that they ask for slots in this order.
        await new Promise((r) => setImmediate(r))
      }
      await until(() => release.length === 6)
      await new Promise((r) => setTimeout(r, 100))
      expect([...started].sort()).toEqual(tenants.slice(0, 6))
      // A read finds a free connection at once, although writes are waiting.
      const read = await Promise.race([
        sql`select 1 as one`.execute(database.db).then(() => 'read'),
        new Promise((r) => setTimeout(() => r('no connection'), 1000)),
      ])
      expect(read).toBe('read')
      // Each freed slot goes to the tenant that has waited longest.
      for (let next = 6; next < tenants.length; next++) {
        release.shift()!()
        await until(() => started.length === next + 1)
        expect(started[next]).toBe(tenants[next])
      }
    } finally {
      // Until every write has ended: one may take its slot, or reach its wait, only after another is released.
      let settled = false
      void Promise.allSettled(writes).then(() => (settled = true))
      for (let i = 0; i < 400 && !settled; i++) {
        for (const r of release.splice(0)) r()
        await new Promise((r) => setTimeout(r, 25))
      }
    }
    await Promise.all(writes)
    expect(await committedIds()).toEqual(tenants.map((_, i) => i + 1))
  })

  it('commits every write of twenty tenants writing at once, in turns through the write slots', async () => {
    const writes = Array.from({ length: 600 }, (_, i) =>
      database.groupedTransaction(
        async (tx) => {
          await sql`select pg_sleep(0.001)`.execute(tx)
          await insert(tx, i + 1)
        },
        { group: `tenant-${i % 20}` },
      ),
    )
    await Promise.all(writes)
    expect(await committedIds()).toHaveLength(600)
  })

  it('fails a write that waited 2 s for a slot with the busy code, and lets the next ones through once slots are free', async () => {
    // A pool of 2 leaves writes one slot: one tenant's write holds it past the 2 s another waits at most.
    const small = createDatabase(fresh.env.DATABASE_URL, { poolSize: 2 })
    try {
      const holder = small.groupedTransaction(
        async (tx) => {
          await insert(tx, 1)
          await new Promise((r) => setTimeout(r, 2300))
        },
        { group: 'holder' },
      )
      await new Promise((r) => setTimeout(r, 50))
      const waiting = small.groupedTransaction((tx) => insert(tx, 100), { group: 'late' })
      await expect(waiting).rejects.toMatchObject({ code: '53300' })
      await holder
      // The tenant that gave up does not keep its place in line: the next write goes through at once.
      const next = small.groupedTransaction((tx) => insert(tx, 200), { group: 'next' })
      expect(
        await Promise.race([
          next.then(() => 'committed'),
          new Promise((r) => setTimeout(() => r('still waiting'), 1000)),
        ]),
      ).toBe('committed')
      expect(await committedIds()).toEqual([1, 200])
    } finally {
      await small.close()
    }
  }, 15_000)

  it("fails a write with PostgreSQL's busy code once it has waited 2 s for its group's share of connections", async () => {
    // Two groups under way (one each, started in turns of their own), each busy for 2.4 s in two statements (one
    // statement may take 2 s at most): a third waits.
    const busy: Promise<unknown>[] = []
    for (let i = 0; i < 2; i++) {
      busy.push(
        database.groupedTransaction(
          async (tx) => {
            await sql`select pg_sleep(1.2)`.execute(tx)
            await sql`select pg_sleep(1.2)`.execute(tx)
          },
          { group: 'acme' },
        ),
      )
      await new Promise((r) => setImmediate(r))
    }
    const waiting = database.groupedTransaction((tx) => insert(tx, 1), { group: 'acme' })
    await expect(waiting).rejects.toMatchObject({ code: '53300' })
    await Promise.all(busy)
    expect(await committedIds()).toEqual([])
    // Nothing is left waiting: the next write goes through at once.
    await database.groupedTransaction((tx) => insert(tx, 2), { group: 'acme' })
    expect(await committedIds()).toEqual([2])
  }, 15_000)

  it('leaves a member that names a row locked by a group under way for a later group, and lets the others go on', async () => {
    await sql`insert into notes (id, body) values (1, 'x'), (2, 'y')`.execute(database.db)
    const bodyOf = async (id: number) =>
      (await other.query<{ body: string }>('select body from notes where id = $1', [id])).rows[0].body
    const order: string[] = []
    const holder = database
      .groupedTransaction(
        async (tx) => {
          await sql`update notes set body = 'held' where id = 1`.execute(tx)
          await sql`select pg_sleep(0.3)`.execute(tx)
        },
        { group: 'acme', locks: ['1'] },
      )
      .then(() => order.push('holder'))
    // The next two arrive in a later turn, while the holder's group is under way.
    await new Promise((r) => setImmediate(r))
    let seenBeforeLocking: string | undefined
    const sameRow = database
      .groupedTransaction(
        async (tx) => {
          seenBeforeLocking = await bodyOf(1)
          await sql`update notes set body = body || '+' where id = 1`.execute(tx)
        },
        { group: 'acme', locks: ['1'] },
      )
      .then(() => order.push('same row'))
    const otherRow = database
      .groupedTransaction((tx) => sql`update notes set body = 'free' where id = 2`.execute(tx), {
        group: 'acme',
        locks: ['2'],
      })
      .then(() => order.push('other row'))
    await Promise.all([holder, sameRow, otherRow])
    // The other row's write did not wait for the holder; the same row's began once the holder had committed.
    expect(order).toEqual(['other row', 'holder', 'same row'])
    expect(seenBeforeLocking).toBe('held')
    expect((await other.query<{ body: string }>('select body from notes order by id')).rows.map((r) => r.body)).toEqual(
      ['held+', 'free'],
    )
  })

  it('tries a member again in a later group when two groups lock the same rows in crossing order', async () => {
    await sql`insert into notes (id, body) values (1, 'x'), (2, 'y')`.execute(database.db)
    const touch = (tx: Kysely<any>, id: number, by: string) =>
      sql`update notes set body = body || ${by} where id = ${id}`.execute(tx)
    const pause = (tx: Kysely<any>) => sql`select pg_sleep(0.2)`.execute(tx)
    // A group whose first member locks one row and holds it while the second member wants the other.
    const crossing = (group: string, first: number, second: number) => [
      database.groupedTransaction(
        async (tx) => {
          await touch(tx, first, group)
          await pause(tx)
        },
        { group },
      ),
      database.groupedTransaction((tx) => touch(tx, second, group), { group }),
    ]
    // Group a locks row 1 then wants row 2; group b locks row 2 then wants row 1.
    const a = crossing('a', 1, 2)
    const b = crossing('b', 2, 1)
    const results = await Promise.allSettled([...a, ...b])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'])
    const rows = (await other.query<{ id: number; body: string }>('select id, body from notes order by id')).rows
    expect(rows.map((r) => [...r.body].sort().join(''))).toEqual(['abx', 'aby'])
  }, 15_000)
})
