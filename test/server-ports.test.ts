import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { tempDir } from './helpers/processes.ts'

/**
 * A port in use at start stops the server with one line naming the setting that holds it and
 * how to change it, and that line is the last one written: both listeners are bound before
 * either is announced, and the lines logged before it come before it. Both streams go to one
 * file, as under `npm start > instance.log 2>&1`, so their order is the one a terminal shows.
 */

const ROOT = new URL('..', import.meta.url).pathname

/** A port on 127.0.0.1 held by the test until it ends. */
async function takenPort (t: TestContext): Promise<number> {
  const holder: Server = createServer()
  holder.listen(0, '127.0.0.1')
  await once(holder, 'listening')
  t.after(() => holder.close())
  const address = holder.address()
  assert.ok(address !== null && typeof address === 'object')
  return address.port
}

/** Runs the command to its exit on a fresh SQLite file; stdout and stderr in one file, as lines. */
async function startOnce (t: TestContext, args: string[], ports: { PORT: string, METRICS_PORT: string }) {
  const dir = tempDir(t)
  const keyFile = join(dir, 'first-api-key')
  const output = join(dir, 'output.log')
  const fd = openSync(output, 'w')
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', METRICS_HOST: '127.0.0.1', LOG_LEVEL: 'info', DATABASE_URL: `sqlite:${join(dir, 'pets.db')}`, FIRST_KEY_FILE: keyFile, ...ports },
    stdio: ['ignore', fd, fd],
    timeout: 30_000
  })
  closeSync(fd)
  const [code, signal] = await once(child, 'exit') as [number | null, NodeJS.Signals | null]
  const lines = readFileSync(output, 'utf8').split('\n')
  assert.equal(lines.pop(), '', 'the output ends with a whole line')
  // Log lines by their message (their time and pid vary); the lines on stderr as written.
  return { code, signal, keyFile, lines: lines.map((line) => line.startsWith('{') ? `log: ${JSON.parse(line).msg}` : line) }
}

/** What a first start on an empty store writes before it listens, in this order. */
const beforeListening = (keyFile: string) => [
  `created the first API key and wrote it to ${keyFile} (mode 0600); it is shown nowhere else`,
  'log: migrations applied',
  `log: created the first API key and wrote it to ${keyFile} (mode 0600); it is shown nowhere else`
]

for (const setting of ['PORT', 'METRICS_PORT'] as const) {
  test(`${setting} in use at start: the last line names ${setting} and how to change it, nothing says listening, exit 1`, async (t) => {
    const port = await takenPort(t)
    const ports = setting === 'PORT' ? { PORT: String(port), METRICS_PORT: '0' } : { PORT: '0', METRICS_PORT: String(port) }
    const run = await startOnce(t, ['src/server.ts'], ports)
    assert.deepEqual(run, {
      code: 1,
      signal: null,
      keyFile: run.keyFile,
      lines: [...beforeListening(run.keyFile), `petstore: cannot start: ${setting} ${port} is in use on 127.0.0.1: set ${setting} to a free port, 0 picks one`]
    })
  })
}

test('petstore serve with METRICS_PORT in use stops with the same last line, exit 1', async (t) => {
  const port = await takenPort(t)
  const run = await startOnce(t, ['src/cli.ts', 'serve'], { PORT: '0', METRICS_PORT: String(port) })
  assert.deepEqual(run, {
    code: 1,
    signal: null,
    keyFile: run.keyFile,
    lines: [...beforeListening(run.keyFile), `petstore: cannot start: METRICS_PORT ${port} is in use on 127.0.0.1: set METRICS_PORT to a free port, 0 picks one`]
  })
})
