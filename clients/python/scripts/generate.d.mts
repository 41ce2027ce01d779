export const PACKAGE_DIR: string
export function renderPython(document: unknown): Record<string, string>
