export const GENERATED_FILE: string
export function documentEnv(databaseUrl: string): Record<string, string>
export function renderTypes(document: unknown): Promise<string>
export function serverDocument(
  server: Record<string, unknown>,
): Promise<Record<string, unknown> & { paths: Record<string, Record<string, { operationId?: string }>> }>
