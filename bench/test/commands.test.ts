import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { wrkVersion } from '../src/wrk.ts'

/** The commands as the workspace's own scripts run them, wherever the tests were started from. */
const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url))
const npmRun = (args: string[]) => spawnSync('npm', ['run', '--silent', ...args], { cwd: BENCH_DIR, encoding: 'utf8', timeout: 180_000 })

test('npm run bench -- --quick --headers runs every scenario against the service, the baseline and the baseline with the service\'s headers, and prints both tables', () => {
  const run = npmRun(['bench', '--', '--quick', '--headers', '--connections', '8'])
  assert.equal(run.status, 0, run.stderr)
  // Latencies to the hundredth of a millisecond: responses take a fraction of one.
  const rows = run.stdout.split('\n').filter((line) => /^\| [a-z0-9 ]+ \| \d+ \| \d+ \| \d+\.\d\d× \| \d+\.\d\d \/ \d+\.\d\d \| \d+\.\d\d \/ \d+\.\d\d \| \d+\.\d\d× \|/.test(line))
  assert.deepEqual(rows.map((row) => row.split('|')[1]!.trim()), ['list 20', 'list 20 status', 'list deep cursor', 'get by id', 'revalidate list 20', 'revalidate get by id', 'create', '401', 'mix'])
  // The servers' CPU time a request, read from /proc: a positive figure for each side of every row.
  for (const row of rows) assert.match(row, /\| \d+\.\d \/ \d+\.\d \|$/)
  for (const row of rows) assert.ok(row.split('|').at(-2)!.split('/').every((cell) => Number(cell) > 0), row)
  assert.match(run.stdout, /^- ready after spawn: service \d+ ms, baseline \d+ ms$/m)
  const headered = run.stdout.split('\n').filter((line) => /^\| [a-z0-9 ]+ \| \d+ \| \d+\.\d\d× \| \d+\.\d\d× \| \d+\.\d\d \| \d+\.\d \|$/.test(line))
  assert.deepEqual(headered.map((row) => row.split('|')[1]!.trim()), ['list 20', 'list 20 status', 'list deep cursor', 'get by id', 'revalidate list 20', 'revalidate get by id', 'create', '401', 'mix'])
  // wrk drives the load where it is installed (.ci/run installs it), autocannon elsewhere.
  assert.match(run.stdout, wrkVersion === undefined ? /^bench: .*, load: autocannon \(in this process\),/m : /^bench: .*, load: wrk \S+ \(1 thread\),/m)
  assert.doesNotMatch(run.stderr, /non-2xx|errors/, 'the service replied to every benchmark request as expected')
})

test('npm run bench:ab compares a commit with the working tree in alternating pairs and leaves no worktree behind', () => {
  const worktrees = () => spawnSync('git', ['worktree', 'list'], { cwd: BENCH_DIR, encoding: 'utf8' }).stdout
  const before = worktrees()
  const run = npmRun(['bench:ab', '--', 'HEAD', '--pairs', '2', '--duration', '1', '--connections', '8', 'list 20', 'create'])
  assert.equal(run.status, 0, run.stderr)
  const rows = run.stdout.split('\n').filter((line) => /^\| [a-z0-9 ]+ \| \d+\.\d{3} \| \d+\.\d\d \d+\.\d\d \| \d+ \| \d+ \| \d+\.\d\d \| \d+\.\d\d \| \d+ \| \d+ \|$/.test(line))
  assert.deepEqual(rows.map((row) => row.split('|')[1]!.trim()), ['list 20', 'create'])
  assert.equal(worktrees(), before)
})

test('npm run bench:ab -- --together --fresh loads both sides of each pair at once, on servers started afresh for each pair', () => {
  const run = npmRun(['bench:ab', '--', 'HEAD', '--together', '--fresh', '--pairs', '2', '--duration', '1', '--connections', '8', 'list 20'])
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /2 pairs of 1 s, A and B loaded at once, servers started afresh for each pair; load: /)
  const rows = run.stdout.split('\n').filter((line) => /^\| list 20 \| \d+\.\d{3} \| \d+\.\d\d \d+\.\d\d \| \d+ \| \d+ \| \d+\.\d\d \| \d+\.\d\d \| \d+ \| \d+ \|$/.test(line))
  assert.equal(rows.length, 1, run.stdout)
})

test('npm run bench:ab -- --instructions counts a warm service under callgrind on both sides and leaves nothing behind', () => {
  const leftovers = () => readdirSync(tmpdir()).filter((name) => name.startsWith('petstore-callgrind-') || name.startsWith('vgdb-pipe-'))
  const before = leftovers()
  const run = npmRun(['bench:ab', '--', 'HEAD', '--instructions', '--warmup', '200', '--requests', '150', '--windows', '3', '401'])
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /^A = HEAD, B = the working tree; 10000 pets; instructions a request under callgrind, the median of 3 windows of 50 requests after 200 uncounted$/m)
  const rows = run.stdout.split('\n').filter((line) => /^\| 401 \| \d+ \| \d+ \| \d+\.\d{3} \| \d+ \| \d+ \| \d+\.\d{3} \|$/.test(line))
  assert.equal(rows.length, 1, run.stdout)
  // Counts of a request, not of the whole process: a 401 costs thousands of instructions, a
  // start-up hundreds of millions.
  const cells = rows[0]!.split('|').map(Number)
  const [all, eventLoop] = [cells[2], cells[5]]
  assert.ok(eventLoop! > 10_000 && eventLoop! <= all! && all! < 10_000_000, rows[0])
  assert.deepEqual(leftovers(), before)
})

test('npm run bench -- --instructions --parts counts the service, the baseline and the baseline with the service\'s headers, says where the instructions went, and leaves nothing behind', () => {
  const leftovers = () => [...readdirSync(tmpdir()).filter((name) => name.startsWith('petstore-callgrind-') || name.startsWith('petstore-headers-') || name.startsWith('vgdb-pipe-')), ...readdirSync('/tmp').filter((name) => /^perf-\d+\.map$/.test(name))]
  const before = leftovers()
  const run = npmRun(['bench', '--', '--instructions', '--parts', '--warmup', '200', '--requests', '150', '--windows', '3', '401', 'get by id'])
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /^service against the baseline, bare and sending the service's headers; 10000 pets; instructions a request under callgrind, the median of 3 windows of 50 requests after 200 uncounted$/m)
  const tables = run.stdout.split(/^(?:every thread|the event loop)$/m).slice(1)
  assert.equal(tables.length, 2, run.stdout)
  const counts = tables.map((table) => table.split('\n').filter((line) => /^\| (401|get by id) \| \d+ \| \d+ \| \d+ \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d\d \|$/.test(line)).map((row) => {
    const cells = row.split('|').map((cell) => cell.trim())
    return { name: cells[1], service: Number(cells[2]), baseline: Number(cells[3]), headered: Number(cells[4]) }
  }))
  assert.deepEqual(counts.map((rows) => rows.map(({ name }) => name)), [['401', 'get by id'], ['401', 'get by id']], run.stdout)
  counts[1]!.forEach((loop, index) => {
    const all = counts[0]![index]!
    // Counts of a request on each side, not of a whole process; the event loop is a part of all threads.
    for (const side of ['service', 'baseline', 'headered'] as const) assert.ok(loop[side] > 10_000 && loop[side] <= all[side] && all[side] < 10_000_000, JSON.stringify({ loop, all }))
  })
  // The parts of each scenario add up to the event loop's count of the window they come from,
  // and the service's own files are among them, where the baselines have none.
  for (const scenario of ['401', 'get by id']) {
    const table = run.stdout.split(`\n${scenario}: the event loop's instructions a request by part`)[1]!.split('\n\n')[0]!
    const bearer = /^\| src\/auth\/bearer\.ts \| (\d+) \| (\d+) \| (\d+) \|$/m.exec(table)
    assert.ok(bearer !== null, table)
    assert.deepEqual([Number(bearer[1]) > 0, Number(bearer[2]), Number(bearer[3])], [true, 0, 0], table)
    assert.match(table, /^\| Node: header name and value checks \(regular expressions\) \| \d+ \| \d+ \| \d+ \|$/m)
    const sum = /^\| all \(parts under 100 too\) \| (\d+) \| (\d+) \| (\d+) \|$/m.exec(table)
    assert.ok(sum !== null, table)
    const loop = counts[1]!.find(({ name }) => name === scenario)!
    // callgrind's summary line and its cost lines, summed, differ by what runs outside any function.
    for (const [index, side] of (['service', 'baseline', 'headered'] as const).entries()) {
      assert.ok(Math.abs(Number(sum[index + 1]) / loop[side] - 1) < 0.01, `${scenario} ${side}: parts ${sum[index + 1]}, event loop ${loop[side]}`)
    }
    // The work done by the clock: timers on every side (libuv runs them on each turn of the
    // loop) and, on a get, the service's key version reads; the baselines read no key version.
    const clock = run.stdout.split(`\n${scenario}: clock-driven work`)[1]!.split('\n\n')[0]!
    const timers = /^\| timers \(Node's timers, the event loop delay monitor\) \| (\d+) \| (\d+) \| (\d+) \|$/m.exec(clock)
    const keyVersion = /^\| the key version, read at most once a millisecond \| (\d+) \| (\d+) \| (\d+) \|$/m.exec(clock)
    assert.ok(timers !== null && keyVersion !== null, clock)
    assert.ok(timers.slice(1).every((count) => Number(count) > 0), clock)
    assert.deepEqual([Number(keyVersion[1]) > 0, Number(keyVersion[2]), Number(keyVersion[3])], [scenario === 'get by id', 0, 0], clock)
    // The literals V8 defined in its runtime, a count on each side. How large depends on what V8
    // has optimized by then, so only the row is checked here (the count itself in
    // instruction-parts.test.ts).
    const literals = run.stdout.split(`\n${scenario}: object literals whose properties V8 defined in its runtime`)[1]?.split('\n\n')[0]
    assert.match(literals ?? '', /^\| service \| baseline \| baseline \+ headers \|\n\|--:\|--:\|--:\|\n\| \d+ \| \d+ \| \d+ \|$/m, run.stdout)
  }
  assert.deepEqual(leftovers(), before)
})

test('npm run bench:ab -- --instructions refuses windows it cannot count, before starting anything', () => {
  for (const windows of ['0', '2.5', '200']) {
    const run = npmRun(['bench:ab', '--', 'HEAD', '--instructions', '--requests', '100', '--windows', windows, '401'])
    assert.equal(run.status, 2, run.stdout)
    assert.equal(run.stderr.trim(), 'bench:ab: --windows must be a whole number from 1 to --requests')
  }
})

test('npm run bench:instances -- --store sqlite measures one and two instances on one SQLite file', () => {
  const run = npmRun(['bench:instances', '--', '--store', 'sqlite', '--seconds', '1', '--rounds', '1', '--connections', '8'])
  assert.equal(run.status, 0, run.stderr)
  const rows = run.stdout.split('\n').filter((line) => /^\| [a-z0-9 ]+ \| [12] \| \d+ \| \d+\.\d\d× \| \d+\.\d\d \| \d+ % \| \d+ \|$/.test(line))
  assert.deepEqual(rows.map((row) => row.split('|').slice(1, 3).map((cell) => cell.trim()).join(' × ')), [
    'list 20 × 1', 'get by id × 1', 'create × 1', 'mix × 1',
    'list 20 × 2', 'get by id × 2', 'create × 2', 'mix × 2'
  ])
  // Every request got the response the scenario expects, by both instances.
  assert.deepEqual(rows.map((row) => row.split('|').at(-2)!.trim()), Array(8).fill('0'))
  assert.match(run.stdout, /one SQLite file; instances started as npm start does; nothing pinned/)
})
