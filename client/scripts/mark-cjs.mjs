// dist/cjs holds the CommonJS build: this package.json makes Node (and TypeScript) read its .js files as CommonJS
// although the package itself is "type": "module".
import { writeFileSync } from 'node:fs'

writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), `${JSON.stringify({ type: 'commonjs' })}\n`)
