import { STATIC_PAGE_CSP } from '../../http/plugins/html-security.js'
import type { Evidence } from '../evidence/evidence.schemas.js'
import type { Dossier } from './dossier.schemas.js'
import type { DossierParts } from './dossier.service.js'

/**
 * The dossier as one self-contained printable HTML page: inline styles, no scripts, no fonts or images,
 * nothing fetched. Every value from the records is escaped. The page carries its Content-Security-Policy itself, so a
 * saved copy keeps it. Written as it is read, a page of records at a time: a use case may link thousands of them.
 */
export async function* renderDossierHtml(d: DossierParts): AsyncGenerator<string> {
  const uc = d.head.use_case
  const { workflow } = d.head
  yield `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(STATIC_PAGE_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dossier: ${esc(uc.name)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
  <p class="muted">AI governance dossier</p>
  <h1>${esc(uc.name)}</h1>
  <p class="muted">Use case ${esc(uc.id)} · generated ${esc(d.head.generated_at)}</p>
  <nav>${SECTIONS.map(([id, title]) => `<a href="#${id}">${esc(title)}</a>`).join(' · ')}</nav>
</header>
<main>`
  yield section(
    'summary',
    table([
      ['ID', code(uc.id)],
      ['Description', esc(uc.description ?? '—')],
      ['Owner', who((uc as Record<string, unknown>).owner)],
      ['Risk level', esc(uc.risk_category_level ?? 'unset')],
      ['AI type / system type', `${esc(uc.ai_type ?? '—')} / ${esc(uc.system_type ?? '—')}`],
      ['Regions', esc(uc.regions.join(', ') || '—')],
      ['Industries', esc(uc.industries.join(', ') || '—')],
      ['Source', esc(uc.source ?? '—')],
      ...customFields((uc as Record<string, unknown>).custom_fields),
      ['Created / updated', `${esc(uc.created_at)} / ${esc(uc.updated_at)}`],
    ]),
  )
  yield section(
    'workflow',
    `${table([
      [
        'Stage',
        workflow.workflow_stage
          ? `${esc(workflow.workflow_stage.name)} (${esc(workflow.workflow_stage.type)}, position ${workflow.workflow_stage.position})`
          : 'none',
      ],
      ['Step', esc(workflow.workflow_stage_step ?? '—')],
      ...(workflow.rejection_reason ? [['Rejection reason', esc(workflow.rejection_reason)] as [string, string]] : []),
    ])}<h3>History</h3>${grid(
      ['When', 'Action', 'Stage', 'Step', 'By'],
      d.head.workflow_history.map((h) => [
        esc(h.created_at),
        esc(h.action.replace('use_case.', '')),
        esc(stageName(h, d.head.workflow_stage_names)),
        esc(stepOf(h.changes) ?? '—'),
        esc(h.actor.name ?? h.actor.type) +
          (h.metadata && typeof h.metadata.reason === 'string' ? `<br><em>${esc(h.metadata.reason)}</em>` : ''),
      ]),
    )}`,
  )
  yield section(
    'gaps',
    d.gaps.missing_answers.length + d.gaps.missing_evidence.length === 0
      ? '<p class="ok">Nothing missing: every required question is answered and every required evidence requirement has evidence.</p>'
      : `<ul>${d.gaps.missing_answers.map((m) => `<li>Unanswered: ${esc(m.questionnaire_key)} — ${esc(m.question)}</li>`).join('')}${d.gaps.missing_evidence.map((m) => `<li>No evidence: ${esc(m.control_key)} — ${esc(m.description)}</li>`).join('')}</ul>`,
  )
  yield* gridSection('models', ['Name', 'Provider', 'Type', 'Version', 'Status'], d.models(), (m) => [
    esc(m.name),
    esc(m.provider ?? '—'),
    esc(m.model_type ?? '—'),
    esc(m.version ?? '—'),
    esc(m.status),
  ])
  yield* gridSection('vendors', ['Name', 'Website', 'Status'], d.vendors(), (v) => [
    esc(v.name),
    esc(v.website ?? '—'),
    esc(v.status),
  ])
  yield* gridSection('risk-scenarios', ['Name', 'Likelihood', 'Impact'], d.risk_scenarios(), (r) => {
    const s = r as Record<string, unknown>
    return [esc(String(s.name ?? s.id)), esc(String(s.likelihood ?? '—')), esc(String(s.impact ?? '—'))]
  })
  yield* gridSection('policy-packs', ['Key', 'Version', 'Name', 'Due date', 'Applied'], d.policy_packs(), (p) => [
    code(p.key),
    String(p.version),
    esc(p.name),
    esc(p.due_date ?? '—'),
    esc(p.applied_at),
  ])
  yield* listSection(
    'controls',
    d.controls(),
    (c) => `
      <div class="control">
        <h3>${esc(c.control_key)} v${c.control_version} — ${esc(c.name)} <span class="status ${esc(c.status)}">${esc(c.status.replace('_', ' '))}</span></h3>
        ${table([
          ['Pack', `${esc(c.policy_pack_key)} v${c.policy_pack_version}`],
          ['Assignee', who((c as Record<string, unknown>).assignee)],
          ['Due date', esc(c.due_date ?? '—')],
          ...(c.notes ? [['Notes', esc(c.notes)] as [string, string]] : []),
        ])}
        ${
          c.evidence_requirements.length === 0
            ? ''
            : grid(
                ['Requirement', 'Required', 'Met', 'Evidence'],
                c.evidence_requirements.map((r) => [
                  `${esc(r.description)} <span class="muted">(${esc(r.type)})</span>`,
                  r.required ? 'yes' : 'no',
                  r.met ? '<span class="ok">yes</span>' : '<span class="bad">no</span>',
                  c.evidence
                    .filter((e) => e.requirement === r.requirement)
                    .map((e) => evidenceRef(e.evidence))
                    .join('<br>') || '—',
                ]),
              )
        }
        ${
          c.evidence.some((e) => e.requirement === null)
            ? `<p>General evidence: ${c.evidence
                .filter((e) => e.requirement === null)
                .map((e) => evidenceRef(e.evidence))
                .join(', ')}</p>`
            : ''
        }
      </div>`,
  )
  yield section(
    'questionnaires',
    d.questionnaires.length === 0
      ? empty()
      : d.questionnaires
          .map((q) => {
            const answers = new Map(q.answers.map((a) => [a.question_id, a]))
            return `<div class="questionnaire">
        <h3>${esc(q.name)} <span class="muted">${esc(q.questionnaire_id)}</span> — ${q.progress.answered}/${q.progress.questions} answered, ${q.progress.required_answered}/${q.progress.required} required${q.progress.complete ? ' <span class="ok">complete</span>' : ' <span class="bad">incomplete</span>'}</h3>
        ${q.sections
          .map(
            (s) =>
              `<h4>${esc(s.title)}</h4>${grid(
                ['Question', 'Answer', 'Answered'],
                s.questions.map((question) => {
                  const a = answers.get(question.id)
                  return [
                    `${esc(question.question)}${question.required ? ' <span class="req">*</span>' : ''}`,
                    a
                      ? answerText(a.value, question.evidence_type, d.answerEvidence) +
                        (a.evidence_ids.length > 0 && question.evidence_type !== 'file'
                          ? `<br><span class="muted">evidence: ${a.evidence_ids.map((id) => evidenceRef(d.answerEvidence.get(id))).join(', ')}</span>`
                          : '')
                      : '<span class="bad">unanswered</span>',
                    a ? `${esc(a.answered_at)}<br><span class="muted">${esc(a.answered_by ?? '')}</span>` : '—',
                  ]
                }),
              )}`,
          )
          .join('')}
      </div>`
          })
          .join(''),
  )
  yield* gridSection(
    'evidence',
    ['ID', 'Title', 'Kind', 'File / URL', 'Size', 'SHA-256', 'Download'],
    d.evidence(),
    (e) => [
      code(e.id),
      esc(e.title ?? '—'),
      esc(e.kind),
      esc(e.file_name ?? e.url ?? '—'),
      e.size === null ? '—' : esc(bytes(e.size)),
      e.sha256 ? `<code class="hash">${esc(e.sha256)}</code>` : '—',
      e.content_path ? code(e.content_path) : '—',
    ],
  )
  yield `</main>
</body>
</html>
`
}

const SECTIONS = [
  ['summary', 'Summary'],
  ['workflow', 'Workflow'],
  ['gaps', 'Open items'],
  ['models', 'Models'],
  ['vendors', 'Vendors'],
  ['risk-scenarios', 'Risk scenarios'],
  ['policy-packs', 'Policy packs'],
  ['controls', 'Controls'],
  ['questionnaires', 'Questionnaires'],
  ['evidence', 'Evidence index'],
] as const
type SectionId = (typeof SECTIONS)[number][0]
const titleOf = (id: SectionId) => SECTIONS.find(([s]) => s === id)![1]

const CSS = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; margin: 0 auto; max-width: 1100px; padding: 24px; }
h1 { font-size: 26px; margin: 4px 0; } h2 { font-size: 19px; border-bottom: 2px solid #1b1f24; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 15px; margin: 18px 0 6px; } h4 { font-size: 14px; margin: 12px 0 4px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; }
th, td { border: 1px solid #c9d1d9; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f3f6; } table.kv th { width: 22%; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; } code.hash { font-size: 11px; }
.muted { color: #57606a; } .ok { color: #1a7f37; font-weight: 600; } .bad { color: #cf222e; font-weight: 600; } .req { color: #cf222e; }
.status { font-size: 12px; border: 1px solid #8c959f; border-radius: 10px; padding: 1px 8px; font-weight: 500; }
.status.implemented { background: #dafbe1; } .status.in_progress { background: #fff8c5; } .status.pending { background: #ffebe9; } .status.not_applicable { background: #eaeef2; }
.control, .questionnaire { border-left: 3px solid #d0d7de; padding-left: 12px; margin-bottom: 14px; }
nav a { color: #0969da; text-decoration: none; }
@media print {
  @page { size: A4; margin: 16mm 14mm; }
  body { max-width: none; padding: 0; font-size: 11pt; }
  nav { display: none; }
  h2 { break-after: avoid; } tr, .control h3, .questionnaire h3 { break-inside: avoid; }
  section { break-inside: auto; } a { color: inherit; }
}`

function section(id: SectionId, body: string): string {
  return `<section id="${id}"><h2>${esc(titleOf(id))}</h2>${body}</section>\n`
}

/** A section of records read a page at a time, each record's markup written as its page arrives. */
async function* listSection<T>(
  id: SectionId,
  pages: AsyncGenerator<T[]>,
  render: (item: T) => string,
  open = '',
  close = '',
): AsyncGenerator<string> {
  yield `<section id="${id}"><h2>${esc(titleOf(id))}</h2>`
  let any = false
  for await (const page of pages) {
    if (page.length === 0) continue
    const markup = page.map(render).join('')
    yield any ? markup : open + markup
    any = true
  }
  yield `${any ? close : empty()}</section>\n`
}

function gridSection<T>(
  id: SectionId,
  headers: string[],
  pages: AsyncGenerator<T[]>,
  cells: (item: T) => string[],
): AsyncGenerator<string> {
  const open = `<table><thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>`
  return listSection(
    id,
    pages,
    (item) =>
      `<tr>${cells(item)
        .map((c) => `<td>${c}</td>`)
        .join('')}</tr>`,
    open,
    '</tbody></table>',
  )
}

function table(rows: [string, string][]): string {
  return `<table class="kv">${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${v}</td></tr>`).join('')}</table>`
}

function grid(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return empty()
  return `<table><thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</tbody></table>`
}

const empty = () => '<p class="muted">None.</p>'
const code = (text: string) => `<code>${esc(text)}</code>`

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** An owner or assignee: a plain string, or `{name, owner_type, owner_id}` once people are records. */
function who(value: unknown): string {
  if (value === null || value === undefined) return '—'
  if (typeof value === 'string') return esc(value)
  const o = value as { name?: string | null; owner_type?: string; owner_id?: string }
  return `${esc(o.name ?? o.owner_id ?? '—')}${o.owner_type ? ` <span class="muted">(${esc(o.owner_type)})</span>` : ''}`
}

function customFields(value: unknown): [string, string][] {
  if (!Array.isArray(value)) return []
  return value.map((f: { name?: string; custom_field_id?: string; value?: unknown }) => [
    f.name ?? f.custom_field_id ?? 'field',
    esc(typeof f.value === 'string' ? f.value : JSON.stringify(f.value ?? null)),
  ])
}

function answerText(value: unknown, type: string, evidence: Map<string, Evidence>): string {
  if (type === 'file') return (value as string[]).map((id) => evidenceRef(evidence.get(id))).join('<br>')
  if (Array.isArray(value)) return esc(value.join(', '))
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  return esc(String(value))
}

function evidenceRef(e: Evidence | undefined): string {
  if (!e) return '—'
  const detail =
    e.kind === 'link'
      ? esc(e.url ?? '')
      : `${esc(e.file_name ?? '')}, ${esc(bytes(e.size ?? 0))}, sha256 ${esc((e.sha256 ?? '').slice(0, 12))}…`
  return `${esc(e.title ?? e.id)} <span class="muted">(${detail}; ${esc(e.id)})</span>`
}

function bytes(n: number): string {
  return n < 1024
    ? `${n} B`
    : n < 1024 * 1024
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${(n / (1024 * 1024)).toFixed(1)} MiB`
}

/** A move records the stage's name at the time; a creation only its id, named from the stages as they are now. */
function stageName(h: Dossier['workflow_history'][number], names: Record<string, string>): string {
  if (h.sub_object_name) return h.sub_object_name
  const change = h.changes?.workflow_stage_id
  const id = Array.isArray(change) && typeof change[1] === 'string' ? change[1] : null
  return id === null ? '—' : (names[id] ?? id)
}

function stepOf(changes: Record<string, unknown[]> | null): string | null {
  const change = changes?.workflow_stage_step
  return Array.isArray(change) && typeof change[1] === 'string' ? change[1] : null
}
