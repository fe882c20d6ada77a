import assert from 'node:assert/strict'
import { hostname } from 'node:os'
import { test } from 'node:test'
import { keyAudit } from '../../src/cli/key-trail.ts'
import { cell, UsageError } from '../../src/cli/output.ts'

/** Who the key trail records when --actor is not given: the OS user, however the process runs; what --actor may hold; how text output shows it. */

const noPasswdEntry = () => { throw Object.assign(new Error('ENOENT: no such file or directory, uv_os_get_passwd'), { code: 'ENOENT' }) }

test('a user with no passwd entry is recorded as $USER, else as its uid', () => {
  assert.deepEqual(keyAudit(undefined, {}, () => ({ username: 'alice' })), { actor: 'alice', host: hostname() })
  assert.deepEqual(keyAudit(undefined, { USER: 'deploy' }, noPasswdEntry), { actor: 'deploy', host: hostname() })
  assert.deepEqual(keyAudit(undefined, { USER: '' }, noPasswdEntry), { actor: `uid ${process.getuid!()}`, host: hostname() })
  assert.deepEqual(keyAudit(' ops-bot ', { USER: 'deploy' }, noPasswdEntry), { actor: 'ops-bot', host: hostname() }, '--actor wins, trimmed')
})

/** One character of each kind that could forge text output, as the CLI's refusal spells it. */
const FORGING: Array<[character: string, escaped: string]> = [
  ['\n', '\\n'], ['\r', '\\r'], ['\t', '\\t'], ['\u0000', '\\u0000'], ['\u001b', '\\u001b'], ['\u007f', '\\u007f'],
  ['\u0085', '\\u0085'], ['\u009b', '\\u009b'], ['\u2028', '\\u2028'], ['\u2029', '\\u2029'],
  ['\u061c', '\\u061c'], ['\u200e', '\\u200e'], ['\u200f', '\\u200f'], ['\u202a', '\\u202a'], ['\u202e', '\\u202e'], ['\u2066', '\\u2066'], ['\u2069', '\\u2069']
]

test('an --actor holding a control character, a line or paragraph separator or a bidirectional control is refused, naming it escaped', () => {
  for (const [character, escaped] of FORGING) {
    assert.throws(() => keyAudit(`mallory${character}x`, {}), (error: unknown) => {
      assert.ok(error instanceof UsageError)
      assert.equal(error.message, `--actor NAME must not hold control characters (line breaks, tabs, escapes), line or paragraph separators, or bidirectional controls; got "mallory${escaped}x"`)
      return true
    }, JSON.stringify(character))
  }
  for (const actor of ['Zoë', '山田 太郎', 'אבי כהן', 'CORP\\alice', 'the "ops" bot', 'bot 🤖']) {
    assert.deepEqual(keyAudit(actor, {}), { actor, host: hostname() }, 'letters, symbols, quotes and backslashes are names')
  }
})

test('a text cell is printed as it is, or quoted with every forging character escaped when it holds one or starts with a quote', () => {
  for (const [character, escaped] of FORGING) assert.equal(cell(`a${character}b`), `"a${escaped}b"`)
  assert.equal(cell('mallory\n2030-01-01T00:00:00.000Z\trevoke\t9'), '"mallory\\n2030-01-01T00:00:00.000Z\\trevoke\\t9"')
  assert.equal(cell('"quoted" at the start'), '"\\"quoted\\" at the start"', 'a plain cell never looks quoted')
  for (const plain of ['deploy-bot', 'Zoë', 'CORP\\alice', 'the "ops" bot', 'אבי', 42]) assert.equal(cell(plain), String(plain))
})
