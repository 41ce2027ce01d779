import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/** The key that encrypts signing secrets at rest, derived so it is never the JWT secret itself. */
export function webhookEncryptionKey(material: string): Buffer {
  return Buffer.from(hkdfSync('sha256', material, 'aigov', 'webhook-secret-encryption', 32))
}

/** `whsec_` + base64 of 32 random bytes, the Standard Webhooks secret format. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** AES-256-GCM: a database reader without the key can neither read nor forge a secret. */
export function encryptSecret(key: Buffer, secret: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`
}

export function decryptSecret(key: Buffer, stored: string): string {
  const [, iv, body, tag] = stored.split('.')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
}
