import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { test, type TestContext } from 'node:test'
import { promisify } from 'node:util'

/**
 * The image of ./Containerfile, built and run with podman: a pet created before a SIGTERM
 * (graceful drain, exit 0) is found by a new container on the same volume, and the first key
 * is in a 0600 file on that volume, never in the container's log. Needs podman (and
 * mmdebstrap for the local base image, when BASE_IMAGE is not given); under CI a missing tool
 * fails the test.
 */

const ROOT = new URL('..', import.meta.url).pathname
const LOCAL_BASE = 'localhost/petstore-node-base:24'
const KEY = /psk_[A-Za-z0-9_-]{43}/
const KEY_FILE = '/data/first-api-key'
const run = promisify(execFile)

async function podman (...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })
  return stdout.trim()
}

/** What a container wrote: podman logs passes its stdout and its stderr on separately. */
async function logsOf (name: string): Promise<string> {
  const { stdout, stderr } = await run('podman', ['logs', name])
  return `${stdout}${stderr}`
}

function missingTool (): string | undefined {
  for (const tool of ['podman', 'mmdebstrap']) {
    if (tool === 'mmdebstrap' && process.env.BASE_IMAGE) continue
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is missing: install it with apt-get install -y podman runc mmdebstrap (.ci/run does)`
  }
  return undefined
}

function skipOrFail (t: TestContext, message: string): void {
  if (process.env.CI === 'true') assert.fail(message)
  process.stderr.write(`\n*** SKIPPED the container test: ${message} ***\n\n`)
  t.skip(message)
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function waitReady (origin: string): Promise<void> {
  for (let tries = 0; tries < 300; tries++) {
    const ready = await fetch(`${origin}/readyz`).then((res) => res.ok, () => false)
    if (ready) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.fail(`${origin} did not become ready`)
}

test('the image serves, writes the first key to a 0600 file on the volume and never to its log, drains on SIGTERM with exit 0, and a new container on the same volume finds the pet', { timeout: 20 * 60_000 }, async (t) => {
  const missing = missingTool()
  if (missing) return skipOrFail(t, missing)
  const base = process.env.BASE_IMAGE ?? LOCAL_BASE
  if (!process.env.BASE_IMAGE && spawnSync('podman', ['image', 'exists', LOCAL_BASE]).status !== 0) {
    await run('deploy/base/build.sh', [LOCAL_BASE], { cwd: ROOT })
  }
  const suffix = randomBytes(4).toString('hex')
  const image = `localhost/petstore:test-${suffix}`
  const volume = `petstore-test-${suffix}`
  const containers: string[] = []
  t.after(async () => {
    for (const name of containers) await podman('rm', '--force', name).catch(() => {})
    await podman('volume', 'rm', '--force', volume).catch(() => {})
    await podman('rmi', '--force', image).catch(() => {})
  })
  // The docker format keeps HEALTHCHECK, which the OCI format has no field for.
  await podman('build', '--quiet', '--format', 'docker', '--network', 'host', '--build-arg', `BASE_IMAGE=${base}`, '-t', image, '.')
  const [user, healthcheck] = (await podman('image', 'inspect', image, '--format', '{{.Config.User}}|{{json .HealthCheck.Test}}')).split('|')
  assert.equal(user, '10001:10001')
  assert.match(healthcheck!, /\/healthz/)
  await podman('volume', 'create', volume)

  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const start = async (name: string) => {
    containers.push(name)
    await podman('run', '--detach', '--name', name, '--network', 'host', '--env', `PORT=${port}`, '--env', 'HOST=127.0.0.1',
      '--env', 'SHUTDOWN_DRAIN_MS=500', '--env', 'METRICS_PORT=0', '--volume', `${volume}:/data`, image)
    await waitReady(origin)
  }

  await start(`petstore-test-${suffix}-1`)
  const firstLog = await logsOf(containers[0]!)
  assert.doesNotMatch(firstLog, KEY, 'the container log holds no key')
  assert.match(firstLog, new RegExp(`created the first API key and wrote it to ${KEY_FILE}`))
  assert.equal(await podman('exec', containers[0]!, 'stat', '-c', '%a %u:%g', KEY_FILE), '600 10001:10001')
  const key = await podman('exec', containers[0]!, 'cat', KEY_FILE)
  assert.match(key, new RegExp(`^${KEY.source}$`))
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const created = await fetch(`${origin}/v1/pets`, { method: 'POST', headers, body: '{"name":"Boxed","categoryId":3,"status":"sold"}' })
  assert.equal(created.status, 201)
  const pet = await created.json() as { id: number }
  assert.deepEqual(pet, { id: pet.id, name: 'Boxed', categoryId: 3, status: 'sold' })

  // podman stop sends SIGTERM to PID 1, which must be node itself for the drain to run.
  await podman('stop', '--time', '20', containers[0]!)
  const [exitCode] = (await podman('inspect', containers[0]!, '--format', '{{.State.ExitCode}}')).split('\n')
  assert.equal(exitCode, '0')
  const stopLog = await logsOf(containers[0]!)
  assert.match(stopLog, /"msg":"draining/)
  assert.match(stopLog, /"msg":"closing/)
  assert.doesNotMatch(stopLog, KEY)

  await start(`petstore-test-${suffix}-2`)
  const found = await fetch(`${origin}/v1/pets/${pet.id}`, { headers })
  assert.equal(found.status, 200)
  assert.deepEqual(await found.json(), pet)
  const secondLog = await logsOf(containers[1]!)
  assert.doesNotMatch(secondLog, /first API key/, 'the key store survived on the volume')
  assert.equal(await podman('exec', containers[1]!, 'cat', KEY_FILE), key, 'the key file is untouched')
})
