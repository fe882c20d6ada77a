import { hash, randomBytes } from 'node:crypto'

/** psk_ + 32 random bytes in base64url (43 characters). */
export const API_KEY_PATTERN = /^psk_[A-Za-z0-9_-]{43}$/
export const KEY_LENGTH = 'psk_'.length + 43

export interface GeneratedKey { key: string, hash: string, prefix: string }

export function hashApiKey (key: string): string {
  // The one-shot form: no Hash object per request on the hot path.
  return hash('sha256', key, 'hex')
}

/** The plaintext leaves this function once, to be shown to whoever asked; only the hash is kept. */
export function generateApiKey (): GeneratedKey {
  const key = 'psk_' + randomBytes(32).toString('base64url')
  return { key, hash: hashApiKey(key), prefix: key.slice(0, 12) }
}
