import type pg from 'pg'
import { eventValues, KEY_EVENT_COLUMNS, keyCreatedEvents, keyEvent, keyRotatedEvents } from '../key-events.ts'
import type { ApiKeyRecord, KeyAudit, KeyEvent, KeyEventFilter, KeyRevocation, KeyRotation, NewApiKey } from '../types.ts'
import type { Connections } from './pooled-connections.ts'
import { KEY_COLUMNS, keyEventFromRow, keyFromRow, type KeyEventRow, type KeyRow } from './postgres-rows.ts'

/**
 * The key changes on PostgreSQL, each in one transaction with the rows it adds to the key
 * trail: a change that fails leaves no row, and no row exists without its change.
 */

/** A key that works at the time in $2: not revoked, not expired. */
const USABLE = '(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))'
const INSERT_EVENT = `INSERT INTO key_events (${KEY_EVENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
// The expiry a key had scheduled and will now not have: it stops earlier, or is revoked first.
const DROP_SCHEDULED_EXPIRY = "DELETE FROM key_events WHERE key_id = $1 AND change = 'expires' AND at > $2"

async function record (client: pg.PoolClient, events: KeyEvent[]): Promise<void> {
  for (const event of events) await client.query(INSERT_EVENT, eventValues(event))
}

export function createApiKey (db: Connections, key: NewApiKey, audit: KeyAudit): Promise<ApiKeyRecord> {
  return db.transaction(db.pool, async (client) => {
    const { rows } = await client.query<KeyRow>(`INSERT INTO api_keys (name, prefix, hash, scope, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${KEY_COLUMNS}`,
      [key.name, key.prefix, key.hash, key.scope ?? 'write', new Date().toISOString(), key.expiresAt ?? null])
    const created = keyFromRow(rows[0]!)
    await record(client, keyCreatedEvents(created, audit))
    return created
  })
}

export async function listApiKeys (db: Connections): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`)
  return rows.map(keyFromRow)
}

export function revokeApiKey (db: Connections, id: number, audit: KeyAudit): Promise<KeyRevocation> {
  return db.transaction(db.pool, async (client): Promise<KeyRevocation> => {
    const now = new Date().toISOString()
    const { rows: [row] } = await client.query<KeyRow>(`UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`, [now, id])
    if (!row) {
      const { rows: [found] } = await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id])
      return found ? { outcome: 'already_revoked', key: keyFromRow(found) } : { outcome: 'not_found' }
    }
    const key = keyFromRow(row)
    const event = keyEvent('revoke', key, now, audit)
    await client.query(DROP_SCHEDULED_EXPIRY, [id, now])
    await record(client, [event])
    return { outcome: 'revoked', key, event }
  })
}

export async function touchApiKey (db: Connections, id: number, at: string): Promise<void> {
  await db.query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id])
}

export async function countApiKeys (db: Connections): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM api_keys')
  return Number(rows[0]!.n)
}

/** Ends the old key at oldExpiresAt and issues its successor, unless it is not usable or already has one. */
export function rotateApiKey (db: Connections, oldId: number, newKey: Omit<NewApiKey, 'scope'>, oldExpiresAt: string, now: string, audit: KeyAudit): Promise<KeyRotation> {
  return db.transaction(db.pool, async (client): Promise<KeyRotation> => {
    // FOR UPDATE: a concurrent rotation of the same key waits here, and then sees this one's successor.
    const { rows: [usable] } = await client.query<{ expires_at: Date | null }>(`SELECT expires_at FROM api_keys WHERE id = $1 AND ${USABLE} FOR UPDATE`, [oldId, now])
    if (!usable) return { outcome: 'not_usable' }
    const { rows: [successor] } = await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE rotated_from = $1 AND ${USABLE} ORDER BY id LIMIT 1`, [oldId, now])
    if (successor) return { outcome: 'has_successor', successor: keyFromRow(successor) }
    const { rows: [oldRow] } = await client.query<KeyRow>(`UPDATE api_keys SET expires_at = LEAST(coalesce(expires_at, $1), $1) WHERE id = $2 RETURNING ${KEY_COLUMNS}`,
      [oldExpiresAt, oldId])
    if (!oldRow) throw new Error('UPDATE … RETURNING returned no row')
    // The successor can do what its predecessor could, and shares its idempotency records.
    const { rows: [createdRow] } = await client.query<KeyRow>(`INSERT INTO api_keys (name, prefix, hash, scope, created_at, expires_at, rotated_from, lineage_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
      [newKey.name, newKey.prefix, newKey.hash, oldRow.scope, now, newKey.expiresAt ?? null, oldId, oldRow.lineage_id])
    if (!createdRow) throw new Error('INSERT … RETURNING returned no row')
    const [old, created, expiryBefore] = [keyFromRow(oldRow), keyFromRow(createdRow), usable.expires_at?.toISOString() ?? null]
    if (old.expiresAt !== expiryBefore) await client.query(DROP_SCHEDULED_EXPIRY, [oldId, now])
    const events = keyRotatedEvents(old, created, expiryBefore, now, audit)
    await record(client, events)
    return { outcome: 'rotated', created, old, events }
  })
}

export async function listKeyEvents (db: Connections, { since, keyId }: KeyEventFilter): Promise<KeyEvent[]> {
  const values = [since, keyId].filter((value) => value !== undefined)
  const where = [since === undefined ? undefined : 'at >= $', keyId === undefined ? undefined : 'key_id = $']
    .filter((term) => term !== undefined).map((term, i) => `${term}${i + 1}`)
  const { rows } = await db.query<KeyEventRow>(`SELECT ${KEY_EVENT_COLUMNS} FROM key_events${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY at, id`, values)
  return rows.map(keyEventFromRow)
}
