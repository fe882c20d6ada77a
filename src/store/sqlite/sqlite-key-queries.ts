import type { StatementSync } from 'node:sqlite'
import { eventValues, KEY_EVENT_COLUMNS, keyCreatedEvents, keyEvent, keyRotatedEvents } from '../key-events.ts'
import type { ApiKeyRecord, KeyAudit, KeyEvent, KeyEventFilter, KeyRevocation, KeyRotation, NewApiKey } from '../types.ts'
import { KEY_COLUMNS, keyEventFromRow, keyFromRow, textOrNull } from './sqlite-rows.ts'

/**
 * The key changes on SQLite, each in one transaction with the rows it adds to the key trail:
 * a change that fails leaves no row, and no row exists without its change.
 */

/** What the key functions need of the store's connection: its prepared statements, its transactions. */
export interface KeyConnection {
  statement(sql: string): StatementSync
  transaction<T>(work: () => T): T
}

/** A key that works at the time bound to it: not revoked, not expired. */
const USABLE = '(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?))'
const INSERT_EVENT = `INSERT INTO key_events (${KEY_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
// The expiry a key had scheduled and will now not have: it stops earlier, or is revoked first.
const DROP_SCHEDULED_EXPIRY = "DELETE FROM key_events WHERE key_id = ? AND change = 'expires' AND at > ?"
const EVENTS = `SELECT ${KEY_EVENT_COLUMNS} FROM key_events`

function record (db: KeyConnection, events: KeyEvent[]): void {
  const insert = db.statement(INSERT_EVENT)
  for (const event of events) insert.run(...eventValues(event))
}

export function createApiKey (db: KeyConnection, key: NewApiKey, audit: KeyAudit): ApiKeyRecord {
  return db.transaction(() => {
    const row = db.statement(`INSERT INTO api_keys (name, prefix, hash, scope, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${KEY_COLUMNS}`)
      .get(key.name, key.prefix, key.hash, key.scope ?? 'write', new Date().toISOString(), key.expiresAt ?? null)
    if (!row) throw new Error('INSERT … RETURNING returned no row')
    const created = keyFromRow(row)
    record(db, keyCreatedEvents(created, audit))
    return created
  })
}

export function revokeApiKey (db: KeyConnection, id: number, audit: KeyAudit): KeyRevocation {
  return db.transaction((): KeyRevocation => {
    const now = new Date().toISOString()
    const row = db.statement(`UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`).get(now, id)
    if (!row) {
      const found = db.statement(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`).get(id)
      return found ? { outcome: 'already_revoked', key: keyFromRow(found) } : { outcome: 'not_found' }
    }
    const key = keyFromRow(row)
    const event = keyEvent('revoke', key, now, audit)
    db.statement(DROP_SCHEDULED_EXPIRY).run(id, now)
    record(db, [event])
    return { outcome: 'revoked', key, event }
  })
}

/** BEGIN IMMEDIATE: two rotations of one key run one after the other, and the second sees the first's successor. */
export function rotateApiKey (db: KeyConnection, oldId: number, newKey: Omit<NewApiKey, 'scope'>, oldExpiresAt: string, now: string, audit: KeyAudit): KeyRotation {
  return db.transaction((): KeyRotation => {
    const usable = db.statement(`SELECT expires_at FROM api_keys WHERE id = ? AND ${USABLE}`).get(oldId, now)
    if (!usable) return { outcome: 'not_usable' }
    const successor = db.statement(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE rotated_from = ? AND ${USABLE} ORDER BY id LIMIT 1`).get(oldId, now)
    if (successor) return { outcome: 'has_successor', successor: keyFromRow(successor) }
    const oldRow = db.statement(`UPDATE api_keys SET expires_at = CASE WHEN expires_at IS NOT NULL AND expires_at < ? THEN expires_at ELSE ? END WHERE id = ? RETURNING ${KEY_COLUMNS}`)
      .get(oldExpiresAt, oldExpiresAt, oldId)
    // The successor can do what its predecessor could, and shares its idempotency records.
    const createdRow = db.statement(`INSERT INTO api_keys (name, prefix, hash, scope, created_at, expires_at, rotated_from, lineage_id)
      SELECT ?, ?, ?, scope, ?, ?, id, coalesce(lineage_id, id) FROM api_keys WHERE id = ? RETURNING ${KEY_COLUMNS}`)
      .get(newKey.name, newKey.prefix, newKey.hash, now, newKey.expiresAt ?? null, oldId)
    if (!oldRow || !createdRow) throw new Error('UPDATE or INSERT … RETURNING returned no row')
    const [old, created, expiryBefore] = [keyFromRow(oldRow), keyFromRow(createdRow), textOrNull(usable.expires_at)]
    if (old.expiresAt !== expiryBefore) db.statement(DROP_SCHEDULED_EXPIRY).run(oldId, now)
    const events = keyRotatedEvents(old, created, expiryBefore, now, audit)
    record(db, events)
    return { outcome: 'rotated', created, old, events }
  })
}

export function listKeyEvents (db: KeyConnection, { since, keyId }: KeyEventFilter): KeyEvent[] {
  const where = [since === undefined ? undefined : 'at >= ?', keyId === undefined ? undefined : 'key_id = ?'].filter((term) => term !== undefined)
  const sql = `${EVENTS}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY at, id`
  return db.statement(sql).all(...[since, keyId].filter((value) => value !== undefined)).map(keyEventFromRow)
}
