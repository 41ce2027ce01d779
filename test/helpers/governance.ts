/** Fixtures for the governance process tests: a hand-built multipart body and an intake questionnaire. */

/** A multipart body by hand, so tests control every byte (boundaries, truncation). */
export function multipart(
  parts: { name: string; value: Buffer | string; filename?: string; type?: string }[],
  boundary = 'xYzBoundary42',
) {
  const chunks: Buffer[] = []
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`,
      ),
    )
    chunks.push(Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value))
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** Two sections covering every question type, three questions required. */
export const INTAKE_SECTIONS = [
  {
    id: 'purpose',
    title: 'Purpose',
    questions: [
      { id: 'decision', question: 'What does the system decide?', evidence_type: 'text', required: true },
      { id: 'users', question: 'How many people does it affect per month?', evidence_type: 'number' },
      { id: 'personal_data', question: 'Does it process personal data?', evidence_type: 'boolean', required: true },
    ],
  },
  {
    id: 'oversight',
    title: 'Oversight',
    questions: [
      {
        id: 'autonomy',
        question: 'How autonomous is it?',
        evidence_type: 'select',
        select_options: ['advisory', 'human-in-the-loop', 'autonomous'],
        required: true,
      },
      {
        id: 'regions',
        question: 'Where is it used?',
        evidence_type: 'select',
        select_options: ['EU', 'US', 'APAC'],
        multiple: true,
      },
      { id: 'dpia', question: 'Attach the DPIA', evidence_type: 'file' },
    ],
  },
]
