import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * PostgreSQL: the two functions behind the audit name indexes (2026-11-23T13b, 2026-11-23T19b), written in
 * PL/pgSQL instead of SQL. Every audit record appended calls both, and a SQL function that cannot be inlined (theirs
 * aggregate) is planned again on each statement that calls it, most of what they cost. PL/pgSQL keeps its plan
 * for the session.
 * Each name gives the same set of keys as before, which is what the indexes hold and `@>` tests, so the indexes stay
 * valid as they are. The keys are no longer made distinct: GIN removes a value's duplicate keys itself.
 */
const grams = (name: string, size: number) => sql`
  create or replace function ${sql.raw(name)}(tenant text, name text) returns text[] language plpgsql immutable parallel safe as $$
    declare
      folded text := lower(name);
      keys text[] := '{}';
    begin
      if folded is null then
        return keys;
      end if;
      for i in 1 .. char_length(folded) - ${sql.lit(size - 1)} loop
        keys := keys || (tenant || ':' || substr(folded, i, ${sql.lit(size)}));
      end loop;
      return keys;
    end
  $$
`

/** The SQL form of 2026-11-23T13b and 19b, which the indexes were built with (also held to by a test). */
export const asSql = (name: string, size: number) => sql`
  create or replace function ${sql.raw(name)}(tenant text, name text) returns text[] language sql immutable parallel safe as $$
    select coalesce(array_agg(distinct tenant || ':' || substr(folded, i, ${sql.lit(size)})), '{}')
    from (select lower(name) as folded) as f, generate_series(1, char_length(folded) - ${sql.lit(size - 1)}) as i
  $$
`

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await grams('audit_name_trigrams', 3).execute(db)
  await grams('audit_name_five_grams', 5).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await asSql('audit_name_trigrams', 3).execute(db)
  await asSql('audit_name_five_grams', 5).execute(db)
}
