// Fails when the families of src/modules import each other in a cycle (madge --circular sees files only: a family
// whose service imports another whose repository imports the first back is a cycle between files that never meet),
// or when a family imports another's repository instead of what its service exports, or when code outside the read
// model imports past its door (src/read-model/index.ts; the database layer, which opens and closes a transaction's
// kept reads, imports read-model/kept-reads.ts itself: the door imports the database's types).
import madge from 'madge'

const graph = (await madge('src', { fileExtensions: ['ts'], tsConfig: 'tsconfig.json' })).obj()
const familyOf = (file) => /^modules\/([^/]+)\//.exec(file)?.[1]
const isRepository = (file) => /[.-]repo\.ts$/.test(file)
const edges = new Map()
const intoRepositories = []
const pastTheReadModel = []
for (const [file, imports] of Object.entries(graph)) {
  if (!file.startsWith('read-model/')) {
    for (const target of imports) {
      const door = file.startsWith('db/') ? 'read-model/kept-reads.ts' : 'read-model/index.ts'
      if (target.startsWith('read-model/') && target !== door) pastTheReadModel.push(`${file} -> ${target}`)
    }
  }
  const from = familyOf(file)
  if (!from) continue
  for (const target of imports) {
    const to = familyOf(target)
    if (!to || to === from) continue
    if (isRepository(target)) intoRepositories.push(`${file} -> ${target}`)
    if (!edges.has(from)) edges.set(from, new Map())
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${file} -> ${target}`)
  }
}

// Depth-first search for a back edge; each cycle is reported with one import per step.
const cycles = []
const state = new Map()
const path = []
const visit = (family) => {
  state.set(family, 'open')
  path.push(family)
  for (const [next, why] of edges.get(family) ?? []) {
    if (state.get(next) === 'open') {
      const loop = path.slice(path.indexOf(next))
      cycles.push([...loop, next].map((f, i, all) => (i < loop.length ? edges.get(f).get(all[i + 1]) : null)).filter(Boolean))
    } else if (!state.has(next)) visit(next)
    void why
  }
  path.pop()
  state.set(family, 'done')
}
for (const family of [...edges.keys()].sort()) if (!state.has(family)) visit(family)

for (const why of intoRepositories) console.error(`a repository imported by another family (use its service):\n  ${why}`)
for (const why of pastTheReadModel) console.error(`an import past the read model's door (import read-model/index.js):\n  ${why}`)
if (intoRepositories.length > 0 || pastTheReadModel.length > 0) process.exit(1)

if (cycles.length === 0) {
  console.log(`no import cycle between the ${new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]).size} families of src/modules`)
} else {
  for (const cycle of cycles) console.error(`family import cycle:\n  ${cycle.join('\n  ')}`)
  process.exit(1)
}
