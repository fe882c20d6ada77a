import assert from 'node:assert/strict'
import { test } from 'node:test'
import { START_ENV, START_FLAGS, START_SCRIPT } from '../src/servers.ts'

test('benchmark servers start as npm start does: every variable and Node flag of the start script is read', () => {
  const rebuilt = `${Object.entries(START_ENV).map(([name, value]) => `${name}=${value} `).join('')}exec node ${START_FLAGS.join(' ')} src/server.ts`
  // The start script's own words, whatever it holds: nothing of it may be left out.
  assert.equal(rebuilt, START_SCRIPT.replace(/(?<!exec )node /, 'exec node '))
  assert.ok(Object.keys(START_ENV).length > 0, 'the start script sets variables')
})
