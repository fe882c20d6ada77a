import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertErrorBody } from '../helpers/errors.ts'
import { alive, logLinesOf } from '../helpers/npm-process.ts'
import { freshSchema } from '../helpers/pg-schema.ts'
import { tempDir } from '../helpers/processes.ts'

/**
 * docs/operations/instances.md, "Two instances in under five minutes", run as written: its shell block,
 * with its database on a schema of the test's own, its ports on free ones and its log files in a
 * folder of the test's own. `npm ci` is left out (the tests run in the installed tree). Two
 * instances of `npm start` on one host, each with the ports the recipe gives it.
 */

const ROOT = new URL('../..', import.meta.url).pathname
const PAGE = 'docs/operations/instances.md'
const HEADING = '## Two instances in under five minutes'
const RECIPE_TIMEOUT_MS = 60_000

/** The recipe's shell block, as the page has it. */
function recipe (): string {
  const page = readFileSync(join(ROOT, PAGE), 'utf8')
  const section = page.slice(page.indexOf(HEADING))
  const block = /```sh\n([\s\S]*?)```/.exec(section)
  assert.ok(page.includes(HEADING) && block, `${PAGE} has "${HEADING}" and a sh block under it`)
  return block[1]!
}

/** As many distinct free ports on 127.0.0.1, all held while they are chosen. */
async function freePorts (count: number): Promise<number[]> {
  const holders: Server[] = []
  for (let i = 0; i < count; i++) {
    const holder = createServer().listen(0, '127.0.0.1')
    await once(holder, 'listening')
    holders.push(holder)
  }
  const ports = holders.map((holder) => (holder.address() as { port: number }).port)
  await Promise.all(holders.map((holder) => new Promise((resolve) => holder.close(resolve))))
  return ports
}

test('the two-instance recipe of docs/operations/instances.md works as written: both instances start on one host, a pet made on one is listed by the other, the revoked key gets 401 from both', { timeout: 120_000 }, async (t) => {
  const { url } = freshSchema(t)
  const dir = tempDir(t)
  const [first, ...rest] = recipe().split('\n')
  assert.equal(first, 'npm ci')
  let script = rest.join('\n')
  const databaseLine = /^export DATABASE_URL='[^']*'$/m
  assert.match(script, databaseLine)
  script = script.replace(databaseLine, 'export DATABASE_URL=DATABASE_URL_OF_THE_TEST')
  // Every port the recipe names, in a setting or an address, becomes a free one; a port it
  // leaves to its default stays the default.
  const named = [...new Set([...script.matchAll(/(?:PORT=|127\.0\.0\.1:)(\d+)\b/g)].map((match) => match[1]!))]
  const free = await freePorts(named.length)
  for (const [i, port] of named.entries()) script = script.replace(new RegExp(`(PORT=|127\\.0\\.0\\.1:)${port}\\b`, 'g'), `$1${free[i]}`)
  script = script.replace('DATABASE_URL_OF_THE_TEST', `'${url}'`)
  script = script.replace(/\binstance-(\d)\.log\b/g, `${dir}/instance-$1.log`)
  // The ports each `npm start` line gives its instance.
  const ports = [1, 2].map((i) => {
    const line = script.split('\n').find((text) => text.includes(`/instance-${i}.log`)) ?? ''
    return { api: /\bPORT=(\d+)/.exec(line)?.[1] ?? '8080', metrics: /\bMETRICS_PORT=(\d+)/.exec(line)?.[1] ?? '9464' }
  })

  // bash, the shell of Debian's terminals; without a terminal it has no job control, so
  // `kill %1 %2` signals each job's npm, which passes SIGTERM on to its server. Only what a
  // terminal has in the environment, and no setting of the service but one: no load shedding,
  // as a busy test machine is no overload.
  const shell = spawn('bash', ['-c', script], {
    cwd: ROOT,
    // A process group of its own: whatever is left of it is killed when the test ends.
    detached: true,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, MAX_EVENT_LOOP_DELAY_MS: '0' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const killGroup = () => {
    try { process.kill(-shell.pid!, 'SIGKILL') } catch { /* the group has ended */ }
  }
  t.after(killGroup)
  let stdout = ''
  let stderr = ''
  shell.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
  shell.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
  // An instance that never gets ready keeps the recipe's readiness loop going: stopped here.
  const watchdog = setTimeout(killGroup, RECIPE_TIMEOUT_MS)
  const [code, signal] = await once(shell, 'close') as [number | null, NodeJS.Signals | null]
  clearTimeout(watchdog)
  const log = (i: number) => readFileSync(join(dir, `instance-${i}.log`), 'utf8')
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, `stderr:\n${stderr}\ninstance-1.log:\n${log(1)}\ninstance-2.log:\n${log(2)}`)

  // What the recipe prints: migrate's line, the readiness loop's replies (each instance's
  // {"status":"ready"}, instance 1's again for each round in which 2 was not ready yet), the
  // created pet, the listing, the revocation, and two 401s.
  const [migrated, readiness, ...after] = stdout.split('\n')
  assert.equal(migrated, `applied ${migrationNames().join(', ')}`)
  assert.match(readiness!, /^(?:\{"status":"ready"\}){2,}$/)
  const pet = { id: 1, name: 'Rex', categoryId: 7 }
  const [createdLine, listedLine, revokedLine, ...refusals] = after
  assert.deepEqual([createdLine, listedLine, revokedLine, refusals.length, refusals.at(-1)], [JSON.stringify(pet), JSON.stringify([pet]), 'revoked key 1', 3, ''])
  for (const refusal of refusals.slice(0, 2)) assertErrorBody(refusal, 401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.')
  // stderr: the two key changes, one JSON line each, and nothing else.
  assert.deepEqual(logLinesOf(stderr).map(({ change, keyId, name }) => ({ change, keyId, name })), [
    { change: 'create', keyId: 1, name: 'demo' },
    { change: 'revoke', keyId: 1, name: 'demo' }
  ])
  assert.equal(stderr.split('\n').filter(Boolean).length, 2, stderr)

  // Each instance listened on the ports the recipe gave it, and `kill` drained and closed it.
  const servers = [1, 2].map((i) => Number(logLinesOf(log(i))[0]?.pid))
  const deadline = Date.now() + 20_000
  while (servers.some(alive) && Date.now() < deadline) await sleep(100)
  assert.deepEqual(servers.filter(alive), [], 'both servers exited')
  const { name, version, scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  for (const [i, { api, metrics }] of [[1, ports[0]!], [2, ports[1]!]] as const) {
    const lines = log(i).split('\n')
    // npm's banner, then the server's JSON log; its request lines are left out.
    assert.deepEqual(lines.filter((line) => !line.startsWith('{')), ['', `> ${name}@${version} start`, `> ${scripts.start}`, '', ''], `instance-${i}.log`)
    assert.deepEqual(logLinesOf(log(i)).filter((line) => line.msg !== 'request').map(({ msg }) => msg), [
      `Server listening at http://127.0.0.1:${api}`,
      `metrics listening at http://127.0.0.1:${metrics}`,
      'draining: not ready, still serving, closing connections after each reply',
      'closing: no new connections, finishing requests in flight'
    ], `instance-${i}.log`)
  }
})

/** The names `petstore migrate` reports for the PostgreSQL migrations, in order. */
function migrationNames (): string[] {
  return readdirSync(join(ROOT, 'migrations/postgres')).filter((file) => file.endsWith('.sql')).sort()
    .map((file) => file.replace(/^(\d+)\.do\.(.*)\.sql$/, '$1-$2'))
}
