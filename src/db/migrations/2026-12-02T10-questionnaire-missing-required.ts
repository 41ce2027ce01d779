import type { Kysely } from 'kysely'

/** The three attachment tables and their owner columns, as of this migration. */
const TABLES = [
  ['use_case_questionnaires', 'use_case_id'],
  ['model_questionnaires', 'model_id'],
  ['vendor_questionnaires', 'vendor_id'],
] as const
const BATCH = 500

interface Stored {
  owner: string
  questionnaire_key: string
  sections: string
  answers: string
}

/** Required questions without an answer: `progress` of src/modules/questionnaires as of this migration. */
export function missingRequired(sections: string, answers: string): number {
  const given = JSON.parse(answers) as Record<string, unknown>
  let missing = 0
  for (const section of JSON.parse(sections) as { questions: { id: string; required?: boolean }[] }[])
    for (const q of section.questions) if (q.required && given[q.id] === undefined) missing += 1
  return missing
}

/**
 * Each questionnaire attachment keeps how many of its required questions are unanswered, written with its answers:
 * the use case list filters on completion with an indexed lookup instead of reading every questionnaire's JSON.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const [table] of TABLES)
    await db.schema
      .alterTable(table)
      .addColumn('missing_required', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
  // PostgreSQL wraps every migration in a transaction; SQLite's migrations have none.
  if (db.isTransaction) await backfill(db)
  else await db.transaction().execute(backfill)
}

/** Computes every attachment's count from its answers (exported for its test). */
export async function backfill(db: Kysely<any>): Promise<void> {
  for (const [table, owner] of TABLES) {
    let after: { owner: string; key: string } | undefined
    for (;;) {
      let q = db
        .selectFrom(`${table} as a`)
        .innerJoin('questionnaires as q', 'q.id', 'a.questionnaire_id')
        .select([`a.${owner} as owner`, 'a.questionnaire_key', 'q.sections', 'a.answers'])
        .orderBy(`a.${owner}`)
        .orderBy('a.questionnaire_key')
        .limit(BATCH)
      if (after) {
        const { owner: o, key } = after
        q = q.where((eb) =>
          eb.or([eb(`a.${owner}`, '>', o), eb.and([eb(`a.${owner}`, '=', o), eb('a.questionnaire_key', '>', key)])]),
        )
      }
      const rows: Stored[] = await q.execute()
      for (const row of rows) {
        const missing = missingRequired(row.sections, row.answers)
        if (missing === 0) continue
        await db
          .updateTable(table)
          .set({ missing_required: missing })
          .where(owner, '=', row.owner)
          .where('questionnaire_key', '=', row.questionnaire_key)
          .execute()
      }
      if (rows.length < BATCH) break
      const last = rows[rows.length - 1]
      after = { owner: last.owner, key: last.questionnaire_key }
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table] of TABLES) await db.schema.alterTable(table).dropColumn('missing_required').execute()
}
