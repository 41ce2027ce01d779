import {
  type DatabaseIntrospector,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type TableMetadata,
} from 'kysely'

/** One column of a table of the current schema, as the catalog gives it. */
interface CatalogColumn {
  schema: string
  table: string
  is_view: boolean
  column: string
  type: string
  type_schema: string
  not_null: boolean
  has_default: boolean
  auto_incrementing: boolean
  comment: string | null
}

/**
 * The tables of the current schema (the service's own; search_path names it), where Kysely's introspector reads
 * every schema of the database. Its migrator asks for the tables on every run, and Kysely resolves each table of
 * each schema by its name as it lists them: a schema that another environment or test run drops meanwhile fails
 * the service's migration (invalid_schema_name, or an undefined column), and a database of many schemas makes
 * every start slower.
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  private readonly schemas: PostgresIntrospector

  // biome-ignore lint/suspicious/noExplicitAny: Kysely hands its introspectors an untyped instance
  constructor(private readonly db: Kysely<any>) {
    this.schemas = new PostgresIntrospector(db)
  }

  getSchemas() {
    return this.schemas.getSchemas()
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<CatalogColumn>`
      select ns.nspname as schema, c.relname as table, c.relkind = 'v' as is_view, a.attname as column,
             typ.typname as type, typns.nspname as type_schema, a.attnotnull as not_null, a.atthasdef as has_default,
             pg_get_serial_sequence(c.oid::regclass::text, a.attname) is not null or a.attidentity <> '' as auto_incrementing,
             col_description(c.oid, a.attnum) as comment
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = c.oid
      join pg_catalog.pg_type typ on typ.oid = a.atttypid
      join pg_catalog.pg_namespace typns on typns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p') and a.attnum > 0 and not a.attisdropped
        and (${options.withInternalKyselyTables} or c.relname not in ('kysely_migration', 'kysely_migration_lock'))
      order by c.relname, a.attnum`.execute(this.db)
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>()
    for (const row of rows) {
      let table = tables.get(row.table)
      if (!table)
        tables.set(row.table, (table = { name: row.table, schema: row.schema, isView: row.is_view, columns: [] }))
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        isAutoIncrementing: row.auto_incrementing,
        hasDefaultValue: row.has_default,
        comment: row.comment ?? undefined,
      })
    }
    return [...tables.values()]
  }

  async getMetadata(options?: DatabaseMetadataOptions) {
    return { tables: await this.getTables(options) }
  }
}

/** PostgreSQL whose introspection (the migrator's) sees the current schema only. */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  // biome-ignore lint/suspicious/noExplicitAny: the signature of Kysely's Dialect.createIntrospector
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db)
  }
}
