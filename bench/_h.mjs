import { fork } from 'node:child_process'
import { join } from 'node:path'
import { freshDatabase, load, P, ROOT, startService, token } from './lib.mjs'
const variants = process.argv.slice(2)
const rate = Number(process.env.RATE ?? 1000)
for (const v of variants) {
  const database = await freshDatabase()
  const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }
  for (const kv of v.split('+').slice(1)) { const [k, val = '1'] = kv.split('='); env[k] = val }
  const service = await startService(database.url, env, process.env.PROF ? ['--max-old-space-size=160', '--cpu-prof', '--cpu-prof-dir=/tmp/prof/' + v] : undefined)
  const base = service.base
  const auth = { authorization: `Bearer ${await token(base)}` }
  const json = { ...auth, 'content-type': 'application/json' }
  const receiver = fork(join(ROOT, 'bench/receiver.mjs'), [], { stdio: 'inherit' })
  const ask = (m) => new Promise((r) => { receiver.once('message', r); if (m) receiver.send(m) })
  const { port } = await ask()
  if (v.startsWith('hook')) await fetch(`${base}${P}/webhook_endpoints`, { method: 'POST', headers: json, body: JSON.stringify({ url: `http://127.0.0.1:${port}/`, events: ['*'] }) })
  let n = 0
  const opts = { url: `${base}${P}/use_cases`, method: 'POST', headers: json, requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `H ${n++}`, description: 'Created under load.', regions: ['EU'] }) }) }] }
  await load('warm', { ...opts, duration: 3, overallRate: rate, connections: 20 }, 201)
  const out = []
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 1500))
    const c0 = service.cpuMs()
    const r = await load('x', { ...opts, duration: 8, overallRate: rate, connections: 20 }, 201)
    let last = -1
    for (let now = (await ask('stats')).received; now !== last; now = (await ask('stats')).received) { last = now; await new Promise((r) => setTimeout(r, 1000)) }
    out.push(((service.cpuMs() - c0) / r.total * 1000).toFixed(0))
  }
  console.log(v, 'µs/create', out.join(' '), 'rss', Math.round(service.peakRssMb()))
  receiver.kill(); await service.stop(); await database.drop()
}
process.exit(0)
