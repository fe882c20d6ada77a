import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'

test('npm run bench -- --quick runs every scenario against the service and the baseline and prints the table', () => {
  const run = spawnSync('npm', ['run', '--silent', 'bench', '--', '--quick', '--connections', '8'], { encoding: 'utf8', timeout: 180_000 })
  assert.equal(run.status, 0, run.stderr)
  // Latencies to the hundredth of a millisecond: answers take a fraction of one.
  const rows = run.stdout.split('\n').filter((line) => /^\| [a-z0-9 ]+ \| \d+ \| \d+ \| \d+\.\d\d× \| \d+\.\d\d \/ \d+\.\d\d \| \d+\.\d\d \/ \d+\.\d\d \| \d+\.\d\d× \|/.test(line))
  assert.deepEqual(rows.map((row) => row.split('|')[1]!.trim()), ['list 20', 'list 20 status', 'list deep cursor', 'get by id', 'create', '401', 'mix'])
  assert.match(run.stdout, /^- ready after spawn: service \d+ ms, baseline \d+ ms$/m)
  assert.doesNotMatch(run.stderr, /non-2xx|errors/, 'the service answered every benchmark request as expected')
})

test('npm run bench:ab compares a commit with the working tree in alternating pairs and leaves no worktree behind', () => {
  const worktrees = () => spawnSync('git', ['worktree', 'list'], { encoding: 'utf8' }).stdout
  const before = worktrees()
  const run = spawnSync('npm', ['run', '--silent', 'bench:ab', '--', 'HEAD', '--pairs', '2', '--duration', '1', '--connections', '8', 'list 20', 'create'], { encoding: 'utf8', timeout: 180_000 })
  assert.equal(run.status, 0, run.stderr)
  const rows = run.stdout.split('\n').filter((line) => /^\| [a-z0-9 ]+ \| \d+\.\d{3} \| \d+\.\d\d \d+\.\d\d \| \d+ \| \d+ \| \d+\.\d\d \| \d+\.\d\d \| \d+ \| \d+ \|$/.test(line))
  assert.deepEqual(rows.map((row) => row.split('|')[1]!.trim()), ['list 20', 'create'])
  assert.equal(worktrees(), before)
})
