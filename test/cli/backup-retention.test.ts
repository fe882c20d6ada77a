import assert from 'node:assert/strict'
import { test } from 'node:test'
import { backupName, expired, takenAt } from '../../src/cli/backup-folder.ts'

/** Which backups `backup --dir` removes, decided from their names and a fixed "now". */

const NOW = new Date('2030-01-31T00:30:00Z')

test('a backup is named by its UTC second, and only names of that form with the extension are read back', () => {
  assert.equal(backupName(new Date('2030-01-31T12:34:56.789Z'), 'db'), 'petstore-20300131T123456Z.db')
  assert.deepEqual(takenAt('petstore-20300131T123456Z.db', 'db'), new Date('2030-01-31T12:34:56Z'))
  for (const name of ['petstore-20300131T123456Z.dump', 'petstore-20300131T123456Z.db.partial', '.petstore-20300131T123456Z.db.partial-1a2b', 'petstore-2030013T123456Z.db', 'petstore-20301331T123456Z.db', 'petstore.db']) {
    assert.equal(takenAt(name, 'db'), undefined, name)
  }
})

test('the day of a backup is its UTC day: one second before midnight is the day before', () => {
  const names = ['petstore-20300131T000000Z.db', 'petstore-20300130T235959Z.db', 'petstore-20300130T120000Z.db', 'petstore-20300129T235959Z.db']
  // Keep 1 (today's), and the newest of the last 2 days: today and the 30th (23:59:59).
  assert.deepEqual(expired(names, 'db', NOW, { keep: 1, keepDaily: 2 }), ['petstore-20300129T235959Z.db', 'petstore-20300130T120000Z.db'])
  // --keep-daily 0 keeps by count alone.
  assert.deepEqual(expired(names, 'db', NOW, { keep: 2, keepDaily: 0 }), ['petstore-20300129T235959Z.db', 'petstore-20300130T120000Z.db'])
  // Enough to keep them all: nothing goes.
  assert.deepEqual(expired(names, 'db', NOW, { keep: 4, keepDaily: 0 }), [])
})

test('other files and the other store\'s backups are never among those removed', () => {
  const names = ['petstore-20200101T000000Z.dump', 'notes.txt', 'petstore-20200101T000000Z.db', 'petstore-20300131T000000Z.db']
  assert.deepEqual(expired(names, 'db', NOW, { keep: 1, keepDaily: 0 }), ['petstore-20200101T000000Z.db'])
  assert.deepEqual(expired(names, 'dump', NOW, { keep: 1, keepDaily: 0 }), [])
})
