// Prints where a CPU profile (node --cpu-prof, e.g. from `npm run bench -- --profile`) spent its time:
// the top functions by self time, and the top packages/files by self time.
//   node bench/profile-summary.mjs bench/results/CPU.<...>.cpuprofile [top]
import { readFileSync } from 'node:fs'

const [file, topArg] = process.argv.slice(2)
const top = Number(topArg ?? 25)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const self = new Map(profile.nodes.map((n) => [n.id, 0]))
const dt = profile.timeDeltas
for (let i = 0; i < profile.samples.length; i++)
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (dt[i] ?? 0))
const total = [...self.values()].reduce((a, b) => a + b, 0)

const byFunction = new Map()
const byPlace = new Map()
for (const node of profile.nodes) {
  const t = self.get(node.id) ?? 0
  const { functionName, url, lineNumber } = node.callFrame
  const where = url
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\//, 'npm:')
    .replace(/.*\/dist\//, 'dist/')
  const fn = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + t)
  const place = where.startsWith('npm:')
    ? where
        .split('/')
        .slice(0, where.startsWith('npm:@') ? 2 : 1)
        .join('/')
    : where || functionName
  byPlace.set(place, (byPlace.get(place) ?? 0) + t)
}
const show = (title, map) => {
  console.log(`\n${title}`)
  for (const [name, t] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((t / total) * 100).toFixed(1).padStart(5)} %  ${name}`)
  }
}
// Inclusive time: a function's own samples plus those of everything it called.
const parent = new Map()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node)
const nodeById = new Map(profile.nodes.map((n) => [n.id, n]))
const inclusive = new Map()
for (const [id, t] of self) {
  const seen = new Set()
  for (let node = nodeById.get(id); node; node = parent.get(node.id)) {
    const { functionName, url, lineNumber } = node.callFrame
    const fn = `${functionName || '(anonymous)'} ${url
      .replace(/^file:\/\//, '')
      .replace(/.*node_modules\//, 'npm:')
      .replace(/.*\/dist\//, 'dist/')}:${lineNumber + 1}`
    if (seen.has(fn)) continue
    seen.add(fn)
    inclusive.set(fn, (inclusive.get(fn) ?? 0) + t)
  }
}
show('self time by function', byFunction)
if (process.argv.includes('--inclusive')) show('inclusive time by function', inclusive)
show('self time by package or file', byPlace)
