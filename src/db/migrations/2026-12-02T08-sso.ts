import type { Kysely } from 'kysely'

/** Single sign-on per tenant: the identity provider (client secret encrypted) and pending logins (state hashes only). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_configs')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.primaryKey().references('tenants.id'))
    .addColumn('issuer', 'varchar(512)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(256)', (c) => c.notNull())
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('email_domains', 'text', (c) => c.notNull())
    .addColumn('provision', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('oidc_logins')
    .addColumn('state_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('browser_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('nonce', 'varchar(64)', (c) => c.notNull())
    .addColumn('return_to', 'varchar(2048)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('used_at', 'varchar(32)')
    .execute()
  await db.schema.createIndex('oidc_logins_expires').on('oidc_logins').columns(['expires_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oidc_logins').execute()
  await db.schema.dropTable('sso_configs').execute()
}
