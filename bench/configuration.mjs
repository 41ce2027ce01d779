// node bench/configuration.mjs (after npm run build): what moving a tenant with `include=records` costs. For the starter
// library alone, then for a tenant of BENCH_RECORDS (1000) use cases with answers, a model, a pack's controls and
// BENCH_FILES (20) evidence files: the time of the export (from the source service), of the plan and of the apply
// (on a fresh target service, started without the starter library), and each service's peak resident memory (VmHWM) during each step. Both services run
// as `npm start` does (its heap cap). Run it alone on the machine.
//   DATABASE_URL=postgres://…   PostgreSQL instead of SQLite
import { createClient } from '@aigov/client'
import { API_KEY, freshDatabase, startService, TENANT } from './lib.mjs'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1000)
const FILES = Number(process.env.BENCH_FILES ?? 20)
const BATCH = 25

/** A service on a fresh database, with a client of its bench tenant (the starter library loaded in it, unless off). */
async function service(env = {}) {
  const database = await freshDatabase()
  const running = await startService(database.url, env)
  const client = createClient({ baseUrl: running.base, apiKey: API_KEY, tenant: TENANT, timeoutMs: 600_000 })
  return {
    client,
    running,
    async stop() {
      await running.stop()
      await database.drop()
    },
  }
}

const must = async (what, call) => {
  const res = await call
  if (res.error) throw new Error(`${what}: ${JSON.stringify(res.error)}`)
  return res.data
}

/** Runs `work`, sampling the service's RSS every 10 ms: seconds taken, RSS before and at its peak. */
async function measure(row, on, work) {
  const before = on.running.rssMb()
  let peak = before
  const timer = setInterval(() => (peak = Math.max(peak, on.running.rssMb())), 10)
  const started = performance.now()
  try {
    return await work()
  } finally {
    clearInterval(timer)
    peak = Math.max(peak, on.running.rssMb())
    row.push({
      seconds: +((performance.now() - started) / 1000).toFixed(2),
      rss_before_mb: +before.toFixed(1),
      rss_peak_mb: +peak.toFixed(1),
    })
  }
}

/** The source's records: use cases with answers, every tenth with the model, a pack and an evidenced control. */
async function fill(client) {
  const model = await must('model', client.models.create({ name: 'Scorer', provider: 'in-house' }))
  const evidence = []
  for (let i = 0; i < FILES; i++) {
    const file = new Blob([`report ${i}\n`.repeat(1000 + i)], { type: 'text/plain' })
    evidence.push(await must('evidence', client.evidence.upload(file, { fileName: `r${i}.txt` })))
  }
  const one = async (i) => {
    const uc = await must(
      'use case',
      client.useCases.create({
        name: `Use case ${String(i).padStart(5, '0')}`,
        description: `Case ${i}`,
        questionnaireIds: ['AI-USE-CASE-INTAKE+1'],
        questions: [{ questionnaireId: 'AI-USE-CASE-INTAKE+1', questionId: 'business_purpose', value: `Purpose ${i}` }],
      }),
    )
    if (i % 10 !== 0) return
    await must('link', client.useCases.models.link(uc.id, model.id))
    await must('pack', client.invoke('applyPolicyPack', [uc.id], { body: { key: 'NIST-AI-RMF' } }))
    const controls = await must('controls', client.invoke('listUseCaseControls', [uc.id], {}))
    const control = controls.items[0]
    await must(
      'control',
      client.invoke('updateUseCaseControl', [uc.id, control.id], { body: { status: 'implemented' } }),
    )
    await must(
      'control evidence',
      client.invoke('linkControlEvidence', [uc.id, control.id], {
        body: { evidenceId: evidence[(i / 10) % FILES].id, requirement: 0 },
      }),
    )
  }
  for (let i = 0; i < RECORDS; i += BATCH)
    await Promise.all(Array.from({ length: Math.min(BATCH, RECORDS - i) }, (_, j) => one(i + j)))
}

/** Export from `source`, plan and apply on a fresh target whose tenant is empty: one line of figures. */
async function move(name, source) {
  const target = await service({ SERVICE_STARTER_LIBRARY: 'false' })
  try {
    const steps = []
    const bundle = await measure(steps, source, async () => {
      const stream = await must('export', source.client.configuration.exportBundle())
      return new Uint8Array(await new Response(stream).arrayBuffer())
    })
    const plan = await measure(steps, target, () => must('plan', target.client.configuration.planBundle(bundle)))
    const applied = await measure(steps, target, () =>
      must('apply', target.client.configuration.applyBundle(bundle, { planId: plan.plan_id })),
    )
    const [exported, planned, apply] = steps
    console.log(
      JSON.stringify({
        name,
        bundle_mb: +(bundle.length / 1024 / 1024).toFixed(2),
        records: plan.records.summary,
        applied: applied.applied,
        export: exported,
        plan: planned,
        apply,
        source_peak_rss_mb: +source.running.peakRssMb().toFixed(1),
        target_peak_rss_mb: +target.running.peakRssMb().toFixed(1),
      }),
    )
  } finally {
    await target.stop()
  }
}

const source = await service()
try {
  await move('starter library', source)
  await fill(source.client)
  await move(`${RECORDS} use cases with answers and ${FILES} evidence files`, source)
} finally {
  await source.stop()
}
