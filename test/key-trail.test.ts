import assert from 'node:assert/strict'
import { hostname } from 'node:os'
import { test } from 'node:test'
import { keyAudit } from '../src/cli/key-trail.ts'

/** Who the key trail records when --actor is not given: the OS user, however the process runs. */

const noPasswdEntry = () => { throw Object.assign(new Error('ENOENT: no such file or directory, uv_os_get_passwd'), { code: 'ENOENT' }) }

test('a user with no passwd entry is recorded as $USER, else as its uid', () => {
  assert.deepEqual(keyAudit(undefined, {}, () => ({ username: 'alice' })), { actor: 'alice', host: hostname() })
  assert.deepEqual(keyAudit(undefined, { USER: 'deploy' }, noPasswdEntry), { actor: 'deploy', host: hostname() })
  assert.deepEqual(keyAudit(undefined, { USER: '' }, noPasswdEntry), { actor: `uid ${process.getuid!()}`, host: hostname() })
  assert.deepEqual(keyAudit(' ops-bot ', { USER: 'deploy' }, noPasswdEntry), { actor: 'ops-bot', host: hostname() }, '--actor wins, trimmed')
})
