// Sizes as people read them, and the refusal of a file over the service's limit (before any byte is sent).

/** "25 MB", "512 KB": a byte count as people read it. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Number((bytes / (1024 * 1024)).toFixed(1))} MB`
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KB`
  return `${bytes} bytes`
}

/** Why a file cannot be sent, said before any byte goes (undefined: it may be sent). */
export function tooLarge(size: number, maxBytes: number | undefined): string | undefined {
  if (maxBytes === undefined || size <= maxBytes) return undefined
  return `This file is ${formatBytes(size)}; the service takes files up to ${formatBytes(maxBytes)}.`
}
