import {
  AliasNode,
  DeleteQueryNode,
  InsertQueryNode,
  type Kysely,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  RawNode,
  type RootOperationNode,
  TableNode,
  type UnknownRow,
  UpdateQueryNode,
} from 'kysely'
import type { Tables } from '../db/tables.js'

/**
 * Reads of a tenant's definitions (its workflow start stage, its custom fields) kept for the rest of one group
 * transaction. A group's members are mostly one tenant's creates, and each read both again: on PostgreSQL two of a
 * create's round trips, each of which costs the service more than the statement costs the database.
 *
 * The group's transaction carries a KeptReads as a Kysely plugin (runMembers adds it), so every query the members
 * build passes through it: a write to a table forgets what was kept of that table, whoever writes it, and no writer
 * has to remember to. A member rolled back to its savepoint forgets everything (what it wrote is gone, and what was
 * read after may have seen it). Transactions without one keep nothing: every read goes to the database.
 */
export class KeptReads implements KyselyPlugin {
  readonly #reads = new Map<string, Promise<unknown>>()

  /** `read()` of `table`, done once per `what` (the tenant, and what of it is read). Callers must not change what it returns. */
  read<T>(table: string, what: string, read: () => Promise<T>): Promise<T> {
    const key = `${table}\n${what}`
    let value = this.#reads.get(key) as Promise<T> | undefined
    if (!value) {
      value = read()
      this.#reads.set(key, value)
      value.catch(() => this.#reads.delete(key))
    }
    return value
  }

  /** Forgets everything kept (a member was rolled back). */
  forgetAll(): void {
    this.#reads.clear()
  }

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (this.#reads.size === 0) return node
    const written = writtenTable(node)
    // A builder's select writes nothing; only a builder's write or SQL text can.
    if (written === undefined && !RawNode.is(node)) return node
    for (const key of this.#reads.keys()) {
      const table = key.slice(0, key.indexOf('\n'))
      if (written === undefined ? writesMention(node, table) : written === table) this.#reads.delete(key)
    }
    return node
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result
  }
}

/** `read()` of `table`, kept for the rest of the group when `db` is a group's transaction (see KeptReads). */
export function keptRead<T>(db: Kysely<Tables>, table: string, what: string, read: () => Promise<T>): Promise<T> {
  const kept = db.getExecutor().plugins.find((plugin) => plugin instanceof KeptReads)
  return kept ? (kept as KeptReads).read(table, what, read) : read()
}

/** The table an insert, update or delete built with the query builder writes; undefined for any other query. */
function writtenTable(node: RootOperationNode): string | undefined {
  const target: OperationNode | undefined = InsertQueryNode.is(node)
    ? node.into
    : UpdateQueryNode.is(node)
      ? node.table
      : DeleteQueryNode.is(node)
        ? node.from.froms[0]
        : undefined
  const table = target && AliasNode.is(target) ? target.node : target
  return table && TableNode.is(table) ? table.table.identifier.name : undefined
}

/** Whether a query written as SQL text may write `table`: conservative, it only has to name it beside a write. */
function writesMention(node: RootOperationNode, table: string): boolean {
  if (!RawNode.is(node)) return false
  const text = node.sqlFragments.join(' ').toLowerCase()
  return text.includes(table) && /\b(insert|update|delete|merge|truncate)\b/.test(text)
}
