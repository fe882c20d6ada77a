import { generateApiKey } from './keys.ts'
import type { Store } from '../store/types.ts'

/**
 * A fresh store has no key, and a service nobody can call is no use: the first start makes
 * one. Returns its plaintext for the caller to show once; undefined when keys already exist.
 */
export async function ensureFirstKey (store: Store): Promise<string | undefined> {
  if (await store.countApiKeys() > 0) return undefined
  const generated = generateApiKey()
  await store.createApiKey({ name: 'first key', hash: generated.hash, prefix: generated.prefix })
  return generated.key
}
