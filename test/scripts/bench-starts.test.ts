import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'

/**
 * The benchmark is a workspace of its own (bench/, with its own tests: npm test -w
 * @petstore/bench). This one check stays in the service's suite, so that a change to the
 * service that stops the benchmark from starting it is seen here: the service's start script,
 * its readiness, the responses the scenarios expect.
 */
const SCENARIOS = ['list 20', 'list 20 status', 'list deep cursor', 'get by id', 'revalidate list 20', 'revalidate get by id', 'create', '401', 'mix']

test('npm run bench -- --quick starts the service and the baseline, runs every scenario without a failed request, and prints the table', () => {
  const run = spawnSync('npm', ['run', '--silent', 'bench', '--', '--quick', '--connections', '8'], { encoding: 'utf8', timeout: 180_000 })
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /^bench: node v24\.\S+, load: (wrk \S+ \(1 thread\)|autocannon \(in this process\)), /m)
  const rows = run.stdout.split('\n').filter((line) => /^\| [a-z0-9 ]+ \| \d+ \| \d+ \| \d+\.\d\d× \|/.test(line))
  assert.deepEqual(rows.map((row) => row.split('|')[1]!.trim()), SCENARIOS)
  assert.match(run.stdout, /^- ready after spawn: service \d+ ms, baseline \d+ ms$/m)
  assert.doesNotMatch(run.stderr, /non-2xx|errors/, 'the service replied to every benchmark request as expected')
})
