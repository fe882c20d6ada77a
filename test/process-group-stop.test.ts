import assert from 'node:assert/strict'
import { Agent } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { REPEAT_SIGNAL_WINDOW_MS } from '../src/server.ts'
import { errorCode } from './helpers/load.ts'
import { alive, logLinesOf, startNpm, type NpmStart } from './helpers/npm-process.ts'
import { runCli } from './helpers/processes.ts'
import { send } from './helpers/server-process.ts'

/**
 * SIGTERM to `npm start`'s whole process group (`kill -- -PGID`, systemd's
 * KillMode=control-group) reaches the server twice: once directly, once more as npm passes it
 * on. That repeat must not end the drain: keep-alive clients under load see no reset and no
 * 503, and the drain runs its full length. A second signal sent later, as a second Ctrl-C is,
 * still ends the drain early.
 */

const DRAIN_MS = 2000
const CONNECTIONS = 16
// Clients stop sending this long before the drain ends, as behind a load balancer that has
// seen /readyz fail by then: what the drain is for.
const STOP_SENDING_BEFORE_END_MS = 700

interface Outcome { sentAt: number, status?: number, connection?: string, failure?: string }

let key = ''
let databaseUrl = ''

function start (t: TestContext, drainMs: number): Promise<NpmStart> {
  return startNpm(t, {
    DATABASE_URL: databaseUrl,
    SHUTDOWN_DRAIN_MS: String(drainMs),
    // The load is meant to be served, not shed, rate limited or capped per address.
    RATE_LIMIT_PER_MINUTE: '0',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    MAX_CONNECTIONS_PER_ADDRESS: '0'
  })
}

function countBy<T> (items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1
  return counts
}

/** The log's draining and closing lines, as epoch milliseconds. */
function drainTimes (server: NpmStart): { draining: number, closing: number } {
  const lines = logLinesOf(server.stdout())
  const at = (prefix: string) => lines.find((line) => String(line.msg).startsWith(prefix))?.time as number | undefined
  const draining = at('draining')
  const closing = at('closing')
  assert.ok(draining !== undefined && closing !== undefined, `the log has draining and closing lines:\n${server.stdout()}`)
  return { draining, closing }
}

describe('stopping npm start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-group-stop-'))
  after(() => rmSync(dir, { recursive: true, force: true }))
  before(async () => {
    databaseUrl = `sqlite:${join(dir, 'pets.db')}`
    const created = await runCli(['keys', 'create', '--name', 'load'], { DATABASE_URL: databaseUrl })
    assert.equal(created.code, 0, created.stderr)
    key = created.stdout.trim()
  })

  const targets = {
    'the process group': (server: NpmStart) => process.kill(-server.npm.pid!, 'SIGTERM'),
    'the npm process': (server: NpmStart) => process.kill(server.npm.pid!, 'SIGTERM'),
    'the server process': (server: NpmStart) => process.kill(server.serverPid, 'SIGTERM')
  }
  for (const [target, signal] of Object.entries(targets)) {
    test(`SIGTERM to ${target} under keep-alive read load: no reset, no 503, the full drain, exit 0`, { timeout: 30_000 }, async (t) => {
      const server = await start(t, DRAIN_MS)
      const port = Number(new URL(server.url).port)
      const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
      t.after(() => agent.destroy())
      const outcomes: Outcome[] = []
      let stopAt = Infinity
      const worker = async () => {
        while (Date.now() < stopAt) {
          const outcome: Outcome = { sentAt: Date.now() }
          outcomes.push(outcome)
          try {
            const response = await send(agent, port, 'GET', '/v1/pets?limit=5', { authorization: `Bearer ${key}` })
            outcome.status = response.status
            outcome.connection = String(response.headers.connection)
          } catch (error) {
            outcome.failure = errorCode(error)
            if (outcome.failure === 'ECONNREFUSED') return
          }
        }
      }
      const workers = Array.from({ length: CONNECTIONS }, worker)
      await sleep(300)
      const signalAt = Date.now()
      stopAt = signalAt + DRAIN_MS - STOP_SENDING_BEFORE_END_MS
      signal(server)
      await Promise.all(workers)
      const exit = await server.exited
      assert.deepEqual(exit, { code: 0, signal: null }, `npm exits 0:\n${server.stderr()}`)
      assert.equal(alive(server.serverPid), false, 'the server exited')

      const { draining, closing } = drainTimes(server)
      const tally = countBy(outcomes, (outcome) => outcome.failure ?? String(outcome.status))
      assert.deepEqual(tally, { 200: outcomes.length }, 'every request got 200: no reset, no refusal, no 503')
      const duringDrain = outcomes.filter((outcome) => outcome.sentAt > draining)
      assert.ok(duringDrain.length > 0, 'requests got responses during the drain')
      assert.deepEqual(countBy(duringDrain, (outcome) => outcome.connection ?? 'none'), { close: duringDrain.length }, 'responses during the drain carry Connection: close')
      assert.ok(closing - draining >= DRAIN_MS - 5, `the drain ran its full length: closing ${closing - draining} ms after draining`)
      const repeats = logLinesOf(server.stdout()).filter((line) => String(line.msg).startsWith('signal repeated')).length
      t.diagnostic(`${outcomes.length} requests, ${duringDrain.length} during the drain; closing ${closing - draining} ms after draining; ${repeats} repeated signal(s) taken as the same stop`)
    })
  }

  test('two SIGINTs to the process group, further apart than the repeat window, end the drain early', { timeout: 30_000 }, async (t) => {
    const longDrainMs = 8000
    const secondAfterMs = REPEAT_SIGNAL_WINDOW_MS + 500
    const server = await start(t, longDrainMs)
    process.kill(-server.npm.pid!, 'SIGINT')
    await sleep(secondAfterMs)
    process.kill(-server.npm.pid!, 'SIGINT')
    const exit = await server.exited
    assert.equal(exit.code, 0, server.stderr())
    const { draining, closing } = drainTimes(server)
    assert.ok(closing - draining >= secondAfterMs - 300, `the first Ctrl-C alone did not end the drain: closing ${closing - draining} ms after draining`)
    assert.ok(closing - draining < longDrainMs - 3000, `the second ended it: closing ${closing - draining} ms after draining`)
    const repeats = logLinesOf(server.stdout()).filter((line) => String(line.msg).startsWith('signal repeated')).length
    t.diagnostic(`closing ${closing - draining} ms after draining, the second SIGINT ${secondAfterMs} ms after the first; ${repeats} repeated signal(s) taken as the same stop`)
  })
})
