import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { tempDir } from './helpers/processes.ts'

/**
 * A process manager stops `npm start` by signalling npm. npm passes SIGTERM and SIGINT on to
 * the script's process, which must be the server itself (the script execs node), so the drain
 * runs and no server is left behind once it ends.
 */

const ROOT = new URL('..', import.meta.url).pathname
const DRAIN_MS = 1500

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} sent to the npm process drains the server and leaves no process behind`, { timeout: 60_000 }, async (t) => {
    const dir = tempDir(t)
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0', DATABASE_URL: `sqlite:${join(dir, 'pets.db')}`, SHUTDOWN_DRAIN_MS: String(DRAIN_MS) },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    npm.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
    const listening = await new Promise<{ url: string, pid: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not listen: ${stdout}`)), 30_000)
      npm.stdout.on('data', () => {
        const found = /"pid":(\d+),[^\n]*"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(stdout)
        if (found) {
          clearTimeout(timer)
          resolve({ pid: Number(found[1]), url: found[2]! })
        }
      })
    })
    t.after(() => { if (alive(listening.pid)) process.kill(listening.pid, 'SIGKILL') })
    assert.notEqual(listening.pid, npm.pid, 'the server is npm\'s child')
    assert.equal((await fetch(`${listening.url}/readyz`)).status, 200)

    npm.kill(signal)
    // Draining: still replying, but no longer ready, so a load balancer moves away.
    let sawDraining = false
    const until = Date.now() + DRAIN_MS - 300
    while (Date.now() < until && !sawDraining) {
      const res = await fetch(`${listening.url}/readyz`).catch(() => undefined)
      sawDraining = res?.status === 503
    }
    assert.ok(sawDraining, '/readyz replied 503 during the drain')

    const deadline = Date.now() + 15_000
    while (alive(listening.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    assert.equal(alive(listening.pid), false, 'the server exited')
    assert.match(stdout, /"msg":"closing: no new connections/)
  })
}

/** The options in a command line that starts the server (each of these lines has only Node's). */
const nodeOptionsOf = (command: string) => command.match(/--[^\s",]+/g)

test('the image and the documented command start Node with the options npm start uses', () => {
  const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')
  const start: string = JSON.parse(read('package.json')).scripts.start
  const expected = nodeOptionsOf(start)
  assert.deepEqual(expected, ['--max-semi-space-size=8', '--heap-growing-percent=20', '--no-allocation-site-pretenuring'])
  // The service image's ENTRYPOINT is the last one (the file has a backup stage first).
  const entrypoints = read('Containerfile').match(/^ENTRYPOINT .*$/gm)!
  assert.deepEqual(nodeOptionsOf(entrypoints.at(-1)!), expected)
  assert.deepEqual(nodeOptionsOf(/^ {2}node_modules\/\.bin\/node .*$/m.exec(read('docs/operations/run.md'))![0]), expected)
})
