import type { Kysely } from 'kysely'
import { KeptReads } from '../read-model/kept-reads.js'
import type { Tables } from './tables.js'

export interface TransactionOptions<T> {
  /** PostgreSQL: the transactions committed together share this key (the tenant of a mutation). */
  group?: string
  /**
   * PostgreSQL: the rows the transaction locks to change, each named by a key of the caller's (a record's id): it does
   * not join a group while another group of its key that locks one of them is under way, but waits for a later one.
   */
  locks?: readonly string[]
  /**
   * Runs after the work of every transaction committing together, before the commit, once for all of them that
   * share this function, with the results of those that succeeded; when it throws, none of them commits.
   */
  finish?: (tx: Kysely<Tables>, results: T[]) => Promise<void>
}

/** One transaction waiting to commit with others in a group. */
export interface Member {
  work: (tx: Kysely<Tables>) => Promise<unknown>
  finish: TransactionOptions<unknown>['finish']
  resolve(value: unknown): void
  reject(err: unknown): void
}

/** How a database isolates one member of a group from the others. */
export interface MemberSavepoints {
  begin(): Promise<void> | void
  release(): Promise<void> | void
  /** Releases the savepoint of the member that succeeded and begins the next member's (on PostgreSQL, one round trip). */
  next(): Promise<void> | void
  /** Undoes the member's changes (rollback to its savepoint) and releases the savepoint. */
  rollback(): Promise<void> | void
  /** True when the failure ended the whole transaction, not just the member. */
  endsGroup(err: unknown): boolean
  /** True when the member is to be tried again in a later group instead of failing (it waited on a member of another group). */
  retryLater?(member: Member, err: unknown): boolean
}

/**
 * What a group's members came to: the results of those that succeeded, and the errors of those that failed alone.
 * Both are answered once the group has committed (answerCommitted): a member's failure may come from another
 * member's write (a duplicate key), which its caller must find committed once told.
 */
export interface GroupOutcome {
  done: [Member, unknown][]
  failed: [Member, unknown][]
}

/** Answers the members of a committed group, each with its result or its own error. */
export function answerCommitted({ done, failed }: GroupOutcome): void {
  for (const [member, value] of done) member.resolve(value)
  for (const [member, err] of failed) member.reject(err)
}

/**
 * A member failed in a group run without savepoints: the whole transaction is to be rolled back, the member
 * answered with `cause`, and the others run again.
 */
export class MemberFailed extends Error {
  constructor(
    readonly member: Member,
    cause: unknown,
  ) {
    super('a member of the group failed', { cause })
  }
}

/**
 * Runs a group's members one after another in the open transaction, then each finishing step once with the results
 * of the members that share it. With `savepoints`, each member runs in a savepoint of its own (a member alone needs
 * none: its failure is the transaction's), and members that fail are rolled back alone. Without, the first member to
 * fail throws MemberFailed. Results and failures are returned, to be answered once the caller has committed. Throws
 * when the group as a whole fails: the caller rolls back and fails every member.
 *
 * Written here because neither driver groups transactions; SQLite and PostgreSQL share this part of it.
 */
export async function runMembers(
  tx: Kysely<Tables>,
  members: Member[],
  savepoints: MemberSavepoints | undefined,
): Promise<GroupOutcome> {
  const kept = new KeptReads()
  return runKeepingReads(tx.withPlugin(kept), kept, members, savepoints)
}

async function runKeepingReads(
  tx: Kysely<Tables>,
  kept: KeptReads,
  members: Member[],
  savepoints: MemberSavepoints | undefined,
): Promise<GroupOutcome> {
  const done: [Member, unknown][] = []
  const failed: [Member, unknown][] = []
  if (members.length === 1) done.push([members[0], await members[0].work(tx)])
  else if (!savepoints) {
    for (const member of members) {
      try {
        done.push([member, await member.work(tx)])
      } catch (err) {
        throw new MemberFailed(member, err)
      }
    }
  } else {
    // A member's savepoint is released as the next one begins, in one step, or after the last member.
    let open = false
    for (const member of members) {
      await (open ? savepoints.next() : savepoints.begin())
      open = true
      try {
        done.push([member, await member.work(tx)])
      } catch (err) {
        if (savepoints.endsGroup(err)) throw err
        open = false
        kept.forgetAll()
        await savepoints.rollback()
        if (!savepoints.retryLater?.(member, err)) failed.push([member, err])
      }
    }
    if (open) await savepoints.release()
  }
  const finishing = new Map<NonNullable<Member['finish']>, unknown[]>()
  for (const [member, value] of done) {
    if (!member.finish) continue
    const values = finishing.get(member.finish)
    if (values) values.push(value)
    else finishing.set(member.finish, [value])
  }
  for (const [finish, values] of finishing) await finish(tx, values)
  return { done, failed }
}
