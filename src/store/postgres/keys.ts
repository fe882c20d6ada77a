import type { ApiKeyRecord, KeyRotation, NewApiKey } from '../types.ts'
import type { Connections } from './connections.ts'
import { KEY_COLUMNS, keyFromRow, type KeyRow } from './rows.ts'

/** A key that works at the time in $2: not revoked, not expired. */
const USABLE = '(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))'

export async function createApiKey (db: Connections, key: NewApiKey): Promise<ApiKeyRecord> {
  const { rows } = await db.query<KeyRow>(`INSERT INTO api_keys (name, prefix, hash, scope, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${KEY_COLUMNS}`,
    [key.name, key.prefix, key.hash, key.scope ?? 'write', new Date().toISOString(), key.expiresAt ?? null])
  return keyFromRow(rows[0]!)
}

export async function listApiKeys (db: Connections): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`)
  return rows.map(keyFromRow)
}

export async function revokeApiKey (db: Connections, id: number): Promise<boolean> {
  const result = await db.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2', [new Date().toISOString(), id])
  return (result.rowCount ?? 0) > 0
}

export async function touchApiKey (db: Connections, id: number, at: string): Promise<void> {
  await db.query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id])
}

export async function countApiKeys (db: Connections): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM api_keys')
  return Number(rows[0]!.n)
}

/** Ends the old key at oldExpiresAt and issues its successor, unless it is not usable or already has one. */
export function rotateApiKey (db: Connections, oldId: number, newKey: Omit<NewApiKey, 'scope'>, oldExpiresAt: string, now: string): Promise<KeyRotation> {
  return db.transaction(db.pool, async (client): Promise<KeyRotation> => {
    // FOR UPDATE: a concurrent rotation of the same key waits here, and then sees this one's successor.
    const { rows: [usable] } = await client.query(`SELECT id FROM api_keys WHERE id = $1 AND ${USABLE} FOR UPDATE`, [oldId, now])
    if (!usable) return { outcome: 'not_usable' }
    const { rows: [successor] } = await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE rotated_from = $1 AND ${USABLE} ORDER BY id LIMIT 1`, [oldId, now])
    if (successor) return { outcome: 'has_successor', successor: keyFromRow(successor) }
    const { rows: [old] } = await client.query<KeyRow>(`UPDATE api_keys SET expires_at = LEAST(coalesce(expires_at, $1), $1) WHERE id = $2 RETURNING ${KEY_COLUMNS}`,
      [oldExpiresAt, oldId])
    if (!old) throw new Error('UPDATE … RETURNING returned no row')
    // The successor can do what its predecessor could, and shares its idempotency records.
    const { rows: [created] } = await client.query<KeyRow>(`INSERT INTO api_keys (name, prefix, hash, scope, created_at, expires_at, rotated_from, lineage_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
      [newKey.name, newKey.prefix, newKey.hash, old.scope, now, newKey.expiresAt ?? null, oldId, old.lineage_id])
    if (!created) throw new Error('INSERT … RETURNING returned no row')
    return { outcome: 'rotated', created: keyFromRow(created), old: keyFromRow(old) }
  })
}
