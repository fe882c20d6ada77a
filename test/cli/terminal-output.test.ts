import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { logKeyChanges } from '../../src/cli/key-trail.ts'
import type { KeyEvent } from '../../src/store/types.ts'
import { tempDir } from '../helpers/processes.ts'

/** What a key change writes on stderr: words on a terminal, a JSON log line anywhere else. */

const ROOT = new URL('../..', import.meta.url).pathname
const EVENT: KeyEvent = { at: '2030-01-01T00:00:00.000Z', change: 'create', keyId: 3, prefix: 'psk_abcdefgh', name: 'deploy\u001b[2Jbot', scope: 'read', relatedKeyId: null, actor: 'alice', host: 'build-1' }

function captured (isTTY: boolean): { isTTY: boolean, write: (text: string) => void, text: () => string } {
  let text = ''
  return { isTTY, write: (chunk) => { text += chunk }, text: () => text }
}

test('on a terminal a key change is one line in words, its name escaped; elsewhere one JSON line with the row\'s fields', () => {
  const terminal = captured(true)
  logKeyChanges([EVENT, { ...EVENT, change: 'revoke' }], terminal)
  assert.equal(terminal.text(), 'key change: issued key 3 ("deploy\\u001b[2Jbot", read), by alice on build-1\nkey change: revoked key 3 ("deploy\\u001b[2Jbot"), by alice on build-1\n')

  const pipe = captured(false)
  logKeyChanges([EVENT], pipe)
  const { level, time, pid, hostname: logHost, msg, ...fields } = JSON.parse(pipe.text())
  assert.deepEqual({ level, msg, fields, lines: pipe.text().split('\n').length }, {
    level: 30, msg: 'key change by alice on build-1: issued key 3 ("deploy\\u001b[2Jbot", read)', fields: { event: 'key_change', ...EVENT }, lines: 2
  })
  assert.ok(Number.isInteger(time) && Number.isInteger(pid) && typeof logHost === 'string')
})

test('keys create run on a terminal (script(1)) prints the key and the change in words, no JSON', async (t) => {
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}` }
  // script gives the command a pseudo-terminal for stdin, stdout and stderr alike; its output joins them.
  const command = `${JSON.stringify(process.execPath)} src/cli.ts keys create --name tty-bot --actor ops`
  const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env })
  const [change, key, ...rest] = stdout.split('\r\n')
  assert.deepEqual({ change, rest }, { change: `key change: issued key 1 (tty-bot, write), by ops on ${hostname()}`, rest: [''] })
  assert.match(key!, /^psk_[A-Za-z0-9_-]{43}$/)
})
