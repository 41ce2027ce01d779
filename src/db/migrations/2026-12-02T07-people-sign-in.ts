import type { Kysely } from 'kysely'

/** People sign in: a role per user, their server-side sessions, and one-time sign-in links (hashes only). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('role', 'varchar(8)', (c) => c.notNull().defaultTo('read'))
    .execute()
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('method', 'varchar(16)', (c) => c.notNull())
    .addColumn('address', 'varchar(64)')
    .addColumn('user_agent', 'varchar(256)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('sessions_tenant_id').on('sessions').columns(['tenant_id', 'id']).execute()
  await db.schema.createIndex('sessions_tenant_user').on('sessions').columns(['tenant_id', 'user_id']).execute()
  await db.schema
    .createTable('login_links')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('used_at', 'varchar(32)')
    .execute()
  await db.schema.createIndex('login_links_expires').on('login_links').columns(['expires_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('login_links').execute()
  await db.schema.dropTable('sessions').execute()
  await db.schema.alterTable('users').dropColumn('role').execute()
}
