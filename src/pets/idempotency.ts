import { createHash } from 'node:crypto'
import { setImmediate } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { NewPet } from '../contract/schemas.ts'
import type { Store } from '../store/types.ts'

/**
 * Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): a structured-field string such
 * as "8e03978e-40d5", or the same text bare. 1 to 255 visible ASCII characters either way;
 * inside quotes, \" and \\ stand for one character each.
 */
export const IDEMPOTENCY_KEY_PATTERN = '^(?:[!#-~][!-~]{0,254}|"(?:[!#-\\[\\]-~]|\\\\["\\\\]){1,255}")$'

const idempotencyKeyPattern = new RegExp(IDEMPOTENCY_KEY_PATTERN)

/** The key a header value stands for (quoted and bare spellings of one text are one key); undefined when malformed. */
export function parseIdempotencyKey (header: string): string | undefined {
  if (!idempotencyKeyPattern.test(header)) return undefined
  return header.startsWith('"') ? header.slice(1, -1).replace(/\\(.)/g, '$1') : header
}

/**
 * What "the same request" means: the body as validated, so that field order, whitespace and
 * ignored unknown fields do not count, and categoryId is compared exactly.
 */
export function fingerprintOf (pet: NewPet): string {
  const canonical = JSON.stringify([pet.name, pet.categoryId.toString(), pet.status ?? null])
  return createHash('sha256').update(canonical).digest('hex')
}

export const HOUR_MS = 3_600_000
const PURGE_INTERVAL_MS = HOUR_MS

// Records deleted per statement: each slice is its own short transaction, so neither the event
// loop (SQLite runs in this thread) nor other writers wait on the purge for long.
export const PURGE_SLICE = 1000

/**
 * Removes every record that expired at or before now (ISO 8601), a slice at a time, letting
 * the event loop serve requests between slices; returns how many. Stops after the slice in
 * flight once `signal` aborts.
 */
export async function purgeExpiredRecords (store: Store, now: string, signal?: AbortSignal): Promise<number> {
  let deleted = 0
  for (;;) {
    const slice = await store.deleteExpiredIdempotencyRecords(now, PURGE_SLICE)
    deleted += slice
    if (slice < PURGE_SLICE) return deleted
    await setImmediate()
    if (signal?.aborted) return deleted
  }
}

/**
 * Expired records no longer count (the store checks expiry on every claim); the hourly purge
 * only keeps the table from growing. One purge at a time; closing the app stops it.
 */
export function purgeExpiredIdempotencyRecords (app: FastifyInstance, store: Store, now: () => number) {
  let timer: NodeJS.Timeout | undefined
  const closing = new AbortController()
  let running = false
  app.addHook('onReady', async () => {
    timer = setInterval(() => {
      if (running) return
      running = true
      purgeExpiredRecords(store, new Date(now()).toISOString(), closing.signal).catch((error: unknown) => {
        app.log.warn({ err: error }, 'could not purge expired idempotency records')
      }).finally(() => { running = false })
    }, PURGE_INTERVAL_MS)
    timer.unref()
  })
  app.addHook('onClose', async () => {
    clearInterval(timer)
    closing.abort()
  })
}
