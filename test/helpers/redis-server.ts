import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import type { TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'

const START_TIMEOUT_MS = 10_000

/** A redis-server of one test's own, so that the test may stop it (SIGSTOP) or kill it. */
export interface RedisServer {
  url: string
  child: ChildProcess
}

async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  assert.ok(address !== null && typeof address === 'object')
  server.close()
  await once(server, 'close')
  return address.port
}

async function respondsToPing (url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 500, commandTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null })
  redis.on('error', () => {})
  try {
    await redis.connect()
    return await redis.ping() === 'PONG'
  } catch {
    return false
  } finally {
    redis.disconnect()
  }
}

/**
 * Starts `redis-server` on 127.0.0.1 and a free port, without persistence, and waits until it
 * responds. Killed by its pid when the test ends (woken first, should the test have stopped it).
 * Without the program the test cannot run: undefined after a loud message, and under CI a
 * failure rather than a skip.
 */
export async function startRedisServer (t: TestContext): Promise<RedisServer | undefined> {
  if (spawnSync('redis-server', ['--version']).error) {
    const message = 'redis-server is missing: install it with apt-get install -y redis-server'
    if (process.env.CI === 'true') assert.fail(message)
    process.stderr.write(`\n*** SKIPPED a Redis outage test: ${message} ***\n\n`)
    t.skip(message)
    return undefined
  }
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
    const exited = once(child, 'exit')
    process.kill(child.pid, 'SIGCONT')
    process.kill(child.pid, 'SIGKILL')
    await exited
  })
  const url = `redis://127.0.0.1:${port}`
  const deadline = Date.now() + START_TIMEOUT_MS
  while (!await respondsToPing(url)) {
    assert.ok(child.exitCode === null && Date.now() < deadline, `redis-server on port ${port} did not start`)
    await sleep(50)
  }
  return { url, child }
}
