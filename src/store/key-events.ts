import type { ApiKeyRecord, KeyAudit, KeyChange, KeyEvent } from './types.ts'

/**
 * The rows of the key trail, made in one place for both stores and for the CLI's log line, so
 * that what is logged is what was stored. A row copies what names the key (id, prefix, name,
 * scope), so the trail reads alone; it has no field for the key or its hash.
 */

export function keyEvent (change: KeyChange, key: ApiKeyRecord, at: string, audit: KeyAudit, relatedKeyId: number | null = null): KeyEvent {
  return { at, change, keyId: key.id, prefix: key.prefix, name: key.name, scope: key.scope, relatedKeyId, actor: audit.actor, host: audit.host }
}

/** What createApiKey records: create, and expires when the key is issued with an expiry. */
export function keyCreatedEvents (key: ApiKeyRecord, audit: KeyAudit): KeyEvent[] {
  const created = keyEvent('create', key, key.createdAt, audit)
  return key.expiresAt === null ? [created] : [created, keyEvent('expires', key, key.expiresAt, audit)]
}

/**
 * What rotateApiKey records: rotate on the old key and create on its successor, both at `now`,
 * and expires when the old key's expiry moved (an earlier one it had is kept, and so is its
 * row), or when the successor is issued with an expiry.
 */
export function keyRotatedEvents (old: ApiKeyRecord, created: ApiKeyRecord, expiryBefore: string | null, now: string, audit: KeyAudit): KeyEvent[] {
  const events = [keyEvent('rotate', old, now, audit, created.id), keyEvent('create', created, now, audit, old.id)]
  if (old.expiresAt !== null && old.expiresAt !== expiryBefore) events.push(keyEvent('expires', old, old.expiresAt, audit))
  if (created.expiresAt !== null) events.push(keyEvent('expires', created, created.expiresAt, audit))
  return events
}

/** The columns of key_events in the order eventValues gives them, for both stores' INSERT. */
export const KEY_EVENT_COLUMNS = 'at, change, key_id, key_prefix, key_name, scope, related_key_id, actor, host'

export function eventValues (event: KeyEvent): [string, KeyChange, number, string, string, string, number | null, string, string] {
  return [event.at, event.change, event.keyId, event.prefix, event.name, event.scope, event.relatedKeyId, event.actor, event.host]
}
