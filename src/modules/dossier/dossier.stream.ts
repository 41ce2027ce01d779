import { Readable } from 'node:stream'
import fastJson from 'fast-json-stringify'
import { type TSchema, Type } from 'typebox'
import { lazily, withNullableTypes } from '../../http/plugins/serialization.js'
import { renderDossierHtml } from './dossier.html.js'
import { Dossier } from './dossier.schemas.js'
import type { DossierParts } from './dossier.service.js'

const serializer = (schema: TSchema) => lazily(() => fastJson(withNullableTypes(schema)) as (data: unknown) => string)
const P = Dossier.properties
const head = serializer(
  Type.Object({
    generated_at: P.generated_at,
    use_case: P.use_case,
    workflow: P.workflow,
    workflow_history: P.workflow_history,
    workflow_stage_names: P.workflow_stage_names,
  }),
)
const list = {
  models: serializer(P.models),
  vendors: serializer(P.vendors),
  risk_scenarios: serializer(P.risk_scenarios),
  policy_packs: serializer(P.policy_packs),
  controls: serializer(P.controls),
  questionnaires: serializer(P.questionnaires),
  evidence: serializer(P.evidence),
}
const gaps = serializer(P.gaps)

/**
 * The dossier's JSON, written as it is read: the same document the `Dossier` schema describes, in its order, with each
 * list read and serialized a page at a time. A stream pulls its next chunk only once the socket took the last one, so
 * a slow reader holds one page, and one that stops reading stops the reads.
 */
async function* dossierJson(d: DossierParts): AsyncGenerator<string> {
  const start = head(d.head)
  yield start.slice(0, -1)
  for (const key of ['models', 'vendors', 'risk_scenarios', 'policy_packs', 'controls'] as const)
    yield* array(key, d[key]())
  yield `,"questionnaires":${list.questionnaires(d.questionnaires)}`
  // After the controls, which note the evidence they use.
  yield* array('evidence', d.evidence())
  yield `,"gaps":${gaps(d.gaps)}}`
}

async function* array(key: keyof typeof list, pages: AsyncGenerator<unknown[]>): AsyncGenerator<string> {
  yield `,"${key}":[`
  let first = true
  for await (const page of pages) {
    if (page.length === 0) continue
    const items = list[key](page)
    yield (first ? '' : ',') + items.slice(1, -1)
    first = false
  }
  yield ']'
}

/** The dossier as a byte stream with backpressure, as JSON or as the printable page. */
export function dossierStream(d: DossierParts, format: 'json' | 'html'): Readable {
  const chunks = format === 'html' ? renderDossierHtml(d) : dossierJson(d)
  return Readable.from(
    (async function* () {
      for await (const chunk of chunks) yield Buffer.from(chunk)
    })(),
    { objectMode: false, highWaterMark: 64 * 1024 },
  )
}
