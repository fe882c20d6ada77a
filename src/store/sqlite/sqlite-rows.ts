import type { SQLOutputValue } from 'node:sqlite'
import { PET_STATUSES, type Pet, type PetStatus } from '../../contract/schemas.ts'
import { KEY_CHANGES, KEY_SCOPES, type ApiKeyRecord, type KeyChange, type KeyEvent, type KeyScope } from '../types.ts'

/** A row as node:sqlite types it, whatever the query: each column is checked as it is read. */
export type Row = Record<string, SQLOutputValue>

/** The pet columns, in the order petFromRow reads them. */
export const PET_COLUMNS = 'id, name, category_id, status'
// A key that starts its own lineage leaves lineage_id NULL (see migration key-lineage).
export const KEY_COLUMNS = 'id, name, prefix, scope, created_at, last_used_at, revoked_at, expires_at, coalesce(lineage_id, id) AS lineage_id, rotated_from'

/**
 * The one way a SQLite row becomes a Pet. Pet statements return their rows as arrays
 * (setReturnArrays): node:sqlite builds an object property by property, which a page of a
 * listing pays for on every row. The row's keys are then the positions of PET_COLUMNS, and
 * its int64 columns are bigints (setReadBigInts).
 */
export function petFromRow (row: Row): Pet {
  const pet: Pet = { id: int64(row[0]), name: text(row[1]), categoryId: int64(row[2]) }
  const status = row[3]
  if (status !== null) pet.status = petStatus(status)
  return pet
}

/** A row of KEY_COLUMNS, read as an object with bigints. */
export function keyFromRow (row: Row): ApiKeyRecord {
  return {
    id: Number(int64(row.id)),
    name: text(row.name),
    prefix: text(row.prefix),
    scope: keyScope(row.scope),
    createdAt: text(row.created_at),
    lastUsedAt: textOrNull(row.last_used_at),
    revokedAt: textOrNull(row.revoked_at),
    expiresAt: textOrNull(row.expires_at),
    lineageId: Number(int64(row.lineage_id)),
    rotatedFrom: row.rotated_from === null ? null : Number(int64(row.rotated_from))
  }
}

/** A row of key-events.ts KEY_EVENT_COLUMNS. */
export function keyEventFromRow (row: Row): KeyEvent {
  return {
    at: text(row.at),
    change: keyChange(row.change),
    keyId: Number(int64(row.key_id)),
    prefix: text(row.key_prefix),
    name: text(row.key_name),
    scope: keyScope(row.scope),
    relatedKeyId: row.related_key_id === null ? null : Number(int64(row.related_key_id)),
    actor: text(row.actor),
    host: text(row.host)
  }
}

export function int64 (value: SQLOutputValue | undefined): bigint {
  if (typeof value === 'bigint') return value
  throw unexpected(value, 'an integer read as bigint')
}

export function text (value: SQLOutputValue | undefined): string {
  if (typeof value === 'string') return value
  throw unexpected(value, 'text')
}

export function textOrNull (value: SQLOutputValue | undefined): string | null {
  return value === null ? null : text(value)
}

/** A reader for a text column that holds one of `values`; anything else is unexpected. */
function oneOf<T extends string> (values: readonly T[], what: string): (value: SQLOutputValue | undefined) => T {
  const allowed: ReadonlySet<unknown> = new Set(values)
  return (value) => {
    if (allowed.has(value)) return value as T
    throw unexpected(value, what)
  }
}

const petStatus = oneOf<PetStatus>(PET_STATUSES, 'a pet status')
const keyScope = oneOf<KeyScope>(KEY_SCOPES, 'a key scope')
const keyChange = oneOf<KeyChange>(KEY_CHANGES, 'a key change')

// A column that does not hold what the schema says: a bug or a database edited by hand.
function unexpected (value: SQLOutputValue | undefined, expected: string): TypeError {
  const got = value === undefined ? 'no column' : value === null ? 'NULL' : typeof value === 'string' ? JSON.stringify(value) : typeof value
  return new TypeError(`SQLite returned ${got} where ${expected} was expected`)
}
