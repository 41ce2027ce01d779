import { createHash, randomBytes } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `sk_` + 43 base62 characters: 256 bits of randomness, independent of the tenant. */
export function generateSecret(): string {
  let n = BigInt(`0x${randomBytes(32).toString('hex')}`)
  let out = ''
  for (let i = 0; i < 43; i++) {
    out += BASE62[Number(n % 62n)]
    n /= 62n
  }
  return `sk_${out}`
}

/** Secrets carry 256 bits of entropy, so a plain SHA-256 is a safe, fast lookup hash. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

export function secretPrefix(secret: string): string {
  return secret.slice(0, 9)
}
