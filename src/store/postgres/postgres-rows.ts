import type { Pet, PetStatus } from '../../contract/schemas.ts'
import type { ApiKeyRecord, KeyChange, KeyEvent, KeyScope } from '../types.ts'

/** The pet columns of a PetRow. */
export const PET_COLUMNS = 'id, name, category_id, status'
// A key that starts its own lineage leaves lineage_id NULL (see migration key-lineage).
export const KEY_COLUMNS = 'id, name, prefix, scope, created_at, last_used_at, revoked_at, expires_at, coalesce(lineage_id, id) AS lineage_id, rotated_from'

// int8 columns arrive as text (see keepInt8Text in pool.ts) and become bigint here.
export interface PetRow { id: string, name: string, category_id: string, status: PetStatus | null }
export interface KeyRow {
  id: string
  name: string
  prefix: string
  // The column's CHECK holds it to these two.
  scope: KeyScope
  created_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
  expires_at: Date | null
  lineage_id: string
  rotated_from: string | null
}

/** The one way a PostgreSQL row becomes a Pet. */
export function petFromRow (row: PetRow): Pet {
  const pet: Pet = { id: BigInt(row.id), name: row.name, categoryId: BigInt(row.category_id) }
  if (row.status !== null) pet.status = row.status
  return pet
}

// Timestamps are written as ISO text with milliseconds and read back as the same text.
const iso = (value: Date | null) => value === null ? null : value.toISOString()

export function keyFromRow (row: KeyRow): ApiKeyRecord {
  return {
    id: Number(row.id),
    name: row.name,
    prefix: row.prefix,
    scope: row.scope,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: iso(row.last_used_at),
    revokedAt: iso(row.revoked_at),
    expiresAt: iso(row.expires_at),
    lineageId: Number(row.lineage_id),
    rotatedFrom: row.rotated_from === null ? null : Number(row.rotated_from)
  }
}

export interface KeyEventRow {
  at: Date
  // The column's CHECK holds it to the four changes.
  change: KeyChange
  key_id: string
  key_prefix: string
  key_name: string
  scope: KeyScope
  related_key_id: string | null
  actor: string
  host: string
}

export function keyEventFromRow (row: KeyEventRow): KeyEvent {
  return {
    at: row.at.toISOString(),
    change: row.change,
    keyId: Number(row.key_id),
    prefix: row.key_prefix,
    name: row.key_name,
    scope: row.scope,
    relatedKeyId: row.related_key_id === null ? null : Number(row.related_key_id),
    actor: row.actor,
    host: row.host
  }
}
