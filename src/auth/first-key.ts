import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname, resolve } from 'node:path'
import { keyCreatedEvents } from '../store/key-events.ts'
import { databaseFile } from '../store/index.ts'
import type { KeyAudit, KeyEvent, Store } from '../store/types.ts'
import { API_KEY_PATTERN, generateApiKey, hashApiKey } from './api-key.ts'

/**
 * A fresh store has no key, and a service nobody can call is no use: the first start makes
 * one. Its plaintext goes to one file only, readable by the service's user alone, never to a
 * log or a terminal: container logs and log pipelines keep what they are given, for anyone
 * who can read them.
 */

const MAKE_A_KEY = 'npm run --silent petstore -- keys create --name NAME (with compose: docker compose run --rm migrate keys create --name admin)'

/** The key trail names the service itself as the maker of the first key, on the host it runs on. */
export const FIRST_KEY_ACTOR = 'petstore'

export type FirstKey =
  | { outcome: 'keys_exist' }
  | { outcome: 'created', file: string, prefix: string, event: KeyEvent }
  | { outcome: 'not_created', file: string, reason: string }

/** FIRST_KEY_FILE, else next to the SQLite file, else (PostgreSQL, sqlite::memory:) ./data/first-api-key. */
export function firstKeyFile (config: { FIRST_KEY_FILE?: string, DATABASE_URL: string }): string {
  if (config.FIRST_KEY_FILE) return resolve(config.FIRST_KEY_FILE)
  const file = databaseFile(config.DATABASE_URL)
  return resolve(file === undefined ? 'data' : dirname(file), 'first-api-key')
}

/**
 * Makes the first key when the store has none. The file comes first: a key is stored only once
 * its plaintext is safely on disk, so no working key exists that nobody can read. The file is
 * created, never overwritten. When the store has no key but the file holds one (a start that
 * failed, or lost the insert's result, after writing it), that key is stored: the file's key is
 * the one that works. A file holding anything else makes no key, and the caller says how to make
 * one. The check and the insert run under the store's first-key lock, so instances starting
 * together on an empty database make one key between them.
 */
export async function ensureFirstKey (store: Store, file: string): Promise<FirstKey> {
  const make = async (): Promise<FirstKey> => {
    if (await store.countApiKeys() > 0) return { outcome: 'keys_exist' }
    const kept = keyInFile(file)
    const key = kept ?? generateApiKey().key
    if (kept === undefined) {
      const reason = writeKeyFile(file, key)
      if (reason !== undefined) return { outcome: 'not_created', file, reason }
    }
    const prefix = key.slice(0, 12)
    const audit: KeyAudit = { actor: FIRST_KEY_ACTOR, host: hostname() }
    const record = await store.createApiKey({ name: 'first key', hash: hashApiKey(key), prefix }, audit)
    return { outcome: 'created', file, prefix, event: keyCreatedEvents(record, audit)[0]! }
  }
  return store.underFirstKeyLock(make)
}

/** The key a first key file holds, when it exists and holds one and nothing else. */
function keyInFile (file: string): string | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim()
    return API_KEY_PATTERN.test(text) ? text : undefined
  } catch {
    return undefined
  }
}

/** Writes key to a new file of mode 0600, durably; the reason when it cannot. */
function writeKeyFile (file: string, key: string): string | undefined {
  let fd: number | undefined
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    // wx: an existing file (an earlier key, or another instance's) is never replaced.
    fd = openSync(file, 'wx', 0o600)
    writeSync(fd, `${key}\n`)
    fsyncSync(fd)
    closeSync(fd)
    fd = undefined
    // The file's name too must be on disk before the key is stored.
    const dir = openSync(dirname(file), 'r')
    try { fsyncSync(dir) } finally { closeSync(dir) }
    return undefined
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return 'it already exists, and is never overwritten'
    // A file this start created but could not complete holds no usable key.
    if (fd !== undefined) {
      closeSync(fd)
      rmSync(file, { force: true })
    }
    return code ?? (error as Error).message
  }
}

/**
 * What the first start tells its operator: where the key is, or how to make one; never the key.
 * A key made is also a key change, logged with the fields of its row in the key trail.
 */
export function firstKeyNotice (firstKey: FirstKey): { level: 'info' | 'warn', fields: Record<string, unknown>, message: string } | undefined {
  if (firstKey.outcome === 'created') {
    return { level: 'info', fields: { file: firstKey.file, event: 'key_change', ...firstKey.event }, message: `created the first API key and wrote it to ${firstKey.file} (mode 0600); it is shown nowhere else` }
  }
  if (firstKey.outcome === 'not_created') {
    return { level: 'warn', fields: { file: firstKey.file, reason: firstKey.reason }, message: `made no first API key: cannot create ${firstKey.file} (${firstKey.reason}); make one with: ${MAKE_A_KEY}` }
  }
  return undefined
}
