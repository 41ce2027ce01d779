import type { Kysely } from 'kysely'

/** The authorization server of /mcp keeps every record (clients, grants, codes, tokens, interactions) in one table. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_records')
    .addColumn('kind', 'varchar(64)', (c) => c.notNull())
    .addColumn('id', 'varchar(256)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)')
    .addColumn('grant_id', 'varchar(256)')
    .addColumn('uid', 'varchar(256)')
    .addColumn('user_code', 'varchar(256)')
    .addPrimaryKeyConstraint('oauth_records_pkey', ['kind', 'id'])
    .execute()
  // What the adapter looks records up by besides their id: a grant's tokens (revocation), an interaction's uid.
  await db.schema.createIndex('oauth_records_grant').on('oauth_records').columns(['grant_id']).execute()
  await db.schema.createIndex('oauth_records_uid').on('oauth_records').columns(['kind', 'uid']).execute()
  await db.schema.createIndex('oauth_records_user_code').on('oauth_records').columns(['kind', 'user_code']).execute()
  await db.schema.createIndex('oauth_records_expires').on('oauth_records').columns(['expires_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oauth_records').execute()
}
