import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { openStore } from '../../src/store/index.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { tempDir } from '../helpers/processes.ts'

/**
 * The key migrations on a SQLite database that holds keys and idempotency records from before
 * them: every key becomes a write key of its own lineage, and its records keep working.
 */

const BEFORE_SCOPES = 4

test('after the key-scopes and key-lineage migrations, an existing key is write, its own lineage, and its idempotency record still replays', async (t) => {
  const path = join(tempDir(t), 'petstore.db')
  const db = new DatabaseSync(path)
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)')
  for (const migration of loadMigrations('sqlite').filter(({ version }) => version < BEFORE_SCOPES)) {
    db.exec(migration.sql)
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(migration.version, migration.name, '2030-01-01T00:00:00.000Z')
  }
  db.exec(`INSERT INTO api_keys (id, name, prefix, hash, created_at) VALUES (5, 'old', 'psk_oldoldol', '${'c'.repeat(64)}', '2030-01-01T00:00:00.000Z');
    INSERT INTO pets (id, name, category_id) VALUES (9, 'Rex', 7);
    INSERT INTO idempotency_records VALUES (5, 'order-1', 'fp', 9, '2030-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z')`)
  db.close()

  const store = await openStore(`sqlite:${path}`)
  t.after(() => store.close())
  assert.deepEqual(await store.migrate(), ['004-key-scopes', '005-key-lineage', '006-key-events'])
  const key = await store.findApiKeyByHash('c'.repeat(64))
  assert.deepEqual(key, {
    id: 5, name: 'old', prefix: 'psk_oldoldol', scope: 'write', createdAt: '2030-01-01T00:00:00.000Z', lastUsedAt: null, revokedAt: null, expiresAt: null, lineageId: 5, rotatedFrom: null
  })
  const claim = { keyLineageId: key!.lineageId, key: 'order-1', fingerprint: 'fp', now: '2030-01-02T00:00:00.000Z', expiresAt: '2030-01-03T00:00:00.000Z' }
  assert.deepEqual(await store.createPetIdempotently({ name: 'Rex', categoryId: 7n }, claim), { outcome: 'replayed', pet: { id: 9n, name: 'Rex', categoryId: 7n } })
})
