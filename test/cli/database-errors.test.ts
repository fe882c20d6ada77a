import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { deniedReason } from '../../src/store/sqlite/open.ts'
import { runCli, tempDir } from '../helpers/processes.ts'

/** What the CLI says when DATABASE_URL names a SQLite file it cannot create: what to do, not chown where chown cannot help. */

const failure = (code: string) => Object.assign(new Error(code), { code })

test('a read-only file system (EROFS) is named as such, and no chown is suggested', (t) => {
  const folder = tempDir(t)
  assert.equal(deniedReason(join(folder, 'petstore.db'), failure('EROFS'), 10001),
    `${folder} is on a read-only file system (EROFS); point DATABASE_URL at a writable folder (in a container, a volume) or mount it read-write`)
  assert.equal(deniedReason(join(folder, 'petstore.db'), failure('EACCES'), 10001),
    `${folder} or a file in it is not writable by uid 10001 (EACCES); give the folder to that user (for a bind mount, the host's folder): chown -R 10001:${process.getgid!()} ${folder}`,
    'a folder refused to another uid still gets its chown')
  assert.equal(deniedReason(join(folder, 'petstore.db'), failure('ENOSPC'), 10001), undefined)
})

test('as root, DATABASE_URL=sqlite:/sys/… exits 1 saying the file system refuses even root, without chown', async (t) => {
  if (process.getuid!() !== 0) {
    // Only root is refused by sysfs for another reason than its owner; under CI the tests run as root.
    assert.notEqual(process.env.CI, 'true', 'CI runs the tests as root')
    t.skip('needs root: run as root, as CI does')
    return
  }
  const run = await runCli(['migrate'], { DATABASE_URL: 'sqlite:/sys/petstore-test.db' })
  assert.deepEqual(run, {
    code: 1,
    stdout: '',
    stderr: 'petstore migrate: DATABASE_URL sqlite:/sys/petstore-test.db cannot be opened: /sys refuses new files even to root (EACCES): ' +
      'its file system is read-only or virtual (as /sys and /proc are); point DATABASE_URL at a folder on a writable disk\n'
  })
})
