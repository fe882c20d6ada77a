import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext, type TestOptions } from 'node:test'
import { promisify } from 'node:util'

/**
 * The image of ./Containerfile, built and run with podman: a pet created before a SIGTERM
 * (graceful drain, exit 0) is found by a new container on the same volume, and the first key
 * is in a 0600 file on that volume, never in the container's log; the image's labels say what
 * it is, and it runs alone on a bind mount. Needs podman (and mmdebstrap for the local base
 * images, when BUILD_IMAGE is not given).
 *
 * Building the images takes minutes and hundreds of MB of the machine's image storage, so these
 * tests run only when asked: under CI (CI=true, as .ci/run sets) and with TEST_CONTAINER=1.
 * Asked, a missing tool fails them; not asked, one skipped test says how to run them.
 */

const ROOT = new URL('../..', import.meta.url).pathname
// What deploy/base/build.sh makes: the runtime base without node or npm, and the build stage's.
const LOCAL_BASE = 'localhost/petstore-debian-slim:bookworm'
const { version, description, devDependencies, scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string, description: string, devDependencies: { node: string }, scripts: { start: string } }
// The Node the tests run on, which the image must hold.
const NODE_VERSION = devDependencies.node
const LOCAL_BUILD = `localhost/petstore-node-build:${NODE_VERSION}`
const KEY = /psk_[A-Za-z0-9_-]{43}/
const KEY_FILE = '/data/first-api-key'
const UID = 10001
const run = promisify(execFile)
const CONTAINERFILE = readFileSync(join(ROOT, 'Containerfile'), 'utf8')
// The service image's ENTRYPOINT (the last stage's; the backup stage has its own), whose node
// flags the compile cache is made for: Node keeps one per set of flags.
const ENTRYPOINT = JSON.parse([...CONTAINERFILE.matchAll(/^ENTRYPOINT (\[.*\])$/gm)].at(-1)?.[1] ?? '[]') as string[]

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
    if (tool === 'mmdebstrap' && process.env.BUILD_IMAGE) continue
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is missing: install it with apt-get install -y podman runc mmdebstrap (.ci/run does)`
  }
  return undefined
}

const NOT_ASKED = process.env.CI === 'true' || process.env.TEST_CONTAINER === '1'
  ? undefined
  : 'not run outside CI: it builds OS images with mmdebstrap and podman (minutes, hundreds of MB of image storage); run it with TEST_CONTAINER=1 npm exec -- node --test test/deploy/container.test.ts'
let notAskedShown = false

/** node:test's test, for a test that builds the image: run when asked, else one skipped test stands for them all. */
function imageTest (name: string, options: TestOptions, fn: (t: TestContext) => Promise<void>): void {
  if (NOT_ASKED === undefined) {
    test(name, options, async (t) => {
      const missing = missingTool()
      if (missing) assert.fail(missing)
      await fn(t)
    })
  } else if (!notAskedShown) {
    notAskedShown = true
    test('the container image, built and run with podman', { skip: NOT_ASKED }, () => {})
  }
}

/** The --build-arg flags that name the base images: BUILD_IMAGE and BASE_IMAGE from the environment, else the local ones, made when missing. */
async function baseImageArgs (): Promise<string[]> {
  if (process.env.BUILD_IMAGE) {
    return ['--build-arg', `BUILD_IMAGE=${process.env.BUILD_IMAGE}`, ...(process.env.BASE_IMAGE ? ['--build-arg', `BASE_IMAGE=${process.env.BASE_IMAGE}`] : [])]
  }
  if ([LOCAL_BASE, LOCAL_BUILD].some((image) => spawnSync('podman', ['image', 'exists', image]).status !== 0)) {
    await run('deploy/base/build.sh', [], { cwd: ROOT })
  }
  return ['--build-arg', `BASE_IMAGE=${LOCAL_BASE}`, '--build-arg', `BUILD_IMAGE=${LOCAL_BUILD}`]
}

test('Containerfile: node is the version the tests run on, started with the start script\'s flags, and the compile cache is filled with the same flags', () => {
  assert.equal(/^ARG NODE_VERSION=(\S+)$/m.exec(CONTAINERFILE)?.[1], NODE_VERSION, 'ARG NODE_VERSION is package.json\'s devDependency node')
  assert.match(CONTAINERFILE, /^ARG BUILD_IMAGE=docker\.io\/library\/node:\$\{NODE_VERSION\}-bookworm-slim$/m)
  const startFlags = /exec node (.*) src\/server\.ts$/.exec(scripts.start)?.[1]
  assert.deepEqual(ENTRYPOINT, ['node', ...startFlags!.split(' '), 'src/server.ts'])
  const warm = /^RUN node (.*) --input-type=module \\$/m.exec(CONTAINERFILE)?.[1]
  assert.equal(warm, startFlags, 'the cache is made with ENTRYPOINT\'s flags, or node would not use it')
  assert.match(CONTAINERFILE, /NODE_COMPILE_CACHE=\/app\/\.cache\/node-compile$/m)
})

/**
 * Builds ./Containerfile as `tag` with `buildArgs` (VERSION, REVISION, …), in the docker format,
 * which keeps HEALTHCHECK (the OCI format has no field for it). Removed when the test ends.
 */
async function buildImage (t: TestContext, tag: string, buildArgs: Record<string, string> = {}): Promise<void> {
  t.after(() => podman('rmi', '--force', tag).catch(() => {}))
  const args = Object.entries(buildArgs).flatMap(([name, value]) => ['--build-arg', `${name}=${value}`])
  await podman('build', '--quiet', '--format', 'docker', '--network', 'host', ...await baseImageArgs(), ...args, '-t', tag, '.')
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

imageTest('the image serves, writes the first key to a 0600 file on the volume and never to its log, drains on SIGTERM with exit 0, and a new container on the same volume finds the pet', { timeout: 20 * 60_000 }, async (t) => {
  const suffix = randomBytes(4).toString('hex')
  const image = `localhost/petstore:test-${suffix}`
  const volume = `petstore-test-${suffix}`
  const containers: string[] = []
  t.after(async () => {
    for (const name of containers) await podman('rm', '--force', name).catch(() => {})
    await podman('volume', 'rm', '--force', volume).catch(() => {})
  })
  await buildImage(t, image)
  const [user, healthcheck] = (await podman('image', 'inspect', image, '--format', '{{.Config.User}}|{{json .HealthCheck.Test}}')).split('|')
  assert.equal(user, `${UID}:${UID}`)
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
  assert.equal(await podman('exec', containers[0]!, 'stat', '-c', '%a %u:%g', KEY_FILE), `600 ${UID}:${UID}`)
  const key = await podman('exec', containers[0]!, 'cat', KEY_FILE)
  assert.match(key, new RegExp(`^${KEY.source}$`))
  // The CLI runs in the image as docs/operations/run.md says, with node and no npm.
  assert.match(await podman('exec', containers[0]!, 'node', 'src/cli.ts', 'keys', 'list'), new RegExp(`\t${key.slice(0, 12)}…\t`))
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

imageTest('the image says what it is: OCI labels from the build arguments, package.json\'s version and no other, and no npm', { timeout: 20 * 60_000 }, async (t) => {
  const image = `localhost/petstore:test-labels-${randomBytes(4).toString('hex')}`
  const revision = randomBytes(20).toString('hex')
  const created = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  await buildImage(t, image, { VERSION: version, REVISION: revision, CREATED: created, SOURCE: 'https://git.example/petstore.git' })
  const labels = JSON.parse(await podman('image', 'inspect', image, '--format', '{{json .Labels}}')) as Record<string, string>
  assert.deepEqual(Object.fromEntries(Object.entries(labels).filter(([name]) => name.startsWith('org.opencontainers.image.'))), {
    'org.opencontainers.image.title': 'petstore',
    'org.opencontainers.image.description': description,
    'org.opencontainers.image.version': version,
    'org.opencontainers.image.revision': revision,
    'org.opencontainers.image.created': created,
    'org.opencontainers.image.source': 'https://git.example/petstore.git'
  })
  // npm, npx and corepack stay in the build stage.
  const tools = await podman('run', '--rm', '--entrypoint', 'sh', image, '-c', 'command -v npm npx corepack; ls -d /usr/local/lib/node_modules 2>/dev/null; node -p process.versions.node')
  assert.equal(tools, NODE_VERSION, `node ${NODE_VERSION}, and no npm, npx, corepack or global node_modules`)
  // The compile cache the service uses, as its user with its flags, was filled when the image was built.
  const cache = await podman('run', '--rm', '--read-only', '--entrypoint', 'sh', image, '-c',
    `dir=$(${ENTRYPOINT.slice(0, -1).join(' ')} -p 'require("node:module").getCompileCacheDir()') && echo "$dir" && ls "$dir" | wc -l`)
  const [cacheDir, entries] = cache.split('\n')
  assert.match(cacheDir!, new RegExp(`^/app/\\.cache/node-compile/v${NODE_VERSION.replaceAll('.', '\\.')}-\\w+-[0-9a-f]+-${UID}$`))
  assert.ok(Number(entries) > 100, `the compile cache holds ${entries} entries`)

  const wrong = await podman('build', '--quiet', '--network', 'host', ...await baseImageArgs(), '--build-arg', 'VERSION=0.0.1', '--target', 'dependencies', '.')
    .then(() => undefined, (error: { stderr: string }) => error.stderr)
  assert.match(wrong ?? 'built', new RegExp(`VERSION=0\\.0\\.1, but package\\.json says ${version.replaceAll('.', '\\.')}`))
  const otherNode = await podman('build', '--quiet', '--network', 'host', ...await baseImageArgs(), '--build-arg', 'NODE_VERSION=24.0.0', '--target', 'dependencies', '.')
    .then(() => undefined, (error: { stderr: string }) => error.stderr)
  assert.match(otherNode ?? 'built', new RegExp(`BUILD_IMAGE has node v${NODE_VERSION.replaceAll('.', '\\.')}, but the tests run on v24\\.0\\.0`))
})

imageTest('alone on a bind mount owned by uid 10001, --read-only with --cap-drop=ALL, it serves and writes the first key there; on a root-owned folder it stops with one line naming the folder and the uid', { timeout: 20 * 60_000 }, async (t) => {
  const suffix = randomBytes(4).toString('hex')
  const image = `localhost/petstore:test-alone-${suffix}`
  const folder = mkdtempSync(join(tmpdir(), 'petstore-data-'))
  const names = [`petstore-test-${suffix}-refused`, `petstore-test-${suffix}-alone`]
  t.after(async () => {
    for (const name of names) await podman('rm', '--force', name).catch(() => {})
    // The container's files are uid 10001's: rootless, only podman unshare may remove them.
    if (process.getuid?.() === 0) rmSync(folder, { recursive: true, force: true })
    else await podman('unshare', 'rm', '-rf', folder).catch(() => {})
  })
  await buildImage(t, image)
  const port = await freePort()
  const runAlone = (name: string) => podman('run', '--detach', '--name', name, '--network', 'host', '--read-only', '--tmpfs', '/tmp', '--cap-drop=ALL',
    '--env', `PORT=${port}`, '--env', 'HOST=127.0.0.1', '--env', 'METRICS_PORT=0', '--env', 'SHUTDOWN_DRAIN_MS=0', '--volume', `${folder}:/data`, image)

  // mkdtemp made the folder 0700 and the test's own: root's, or in the container root's when rootless.
  await runAlone(names[0]!)
  assert.equal(await podman('wait', names[0]!), '1')
  assert.deepEqual((await logsOf(names[0]!)).split('\n').filter((line) => line.startsWith('petstore')), [
    `petstore: cannot start: DATABASE_URL sqlite:/data/petstore.db cannot be opened: /data or a file in it is not writable by uid ${UID} (EACCES); give the folder to that user (for a bind mount, the host's folder): chown -R ${UID}:${UID} /data`
  ])

  if (process.getuid?.() === 0) chownSync(folder, UID, UID)
  else await podman('unshare', 'chown', `${UID}:${UID}`, folder)
  await runAlone(names[1]!)
  await waitReady(`http://127.0.0.1:${port}`)
  const key = await podman('exec', names[1]!, 'cat', KEY_FILE)
  const listed = await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
  assert.equal(listed.status, 200)
  if (process.getuid?.() === 0) assert.equal(readFileSync(join(folder, 'first-api-key'), 'utf8').trim(), key, 'the key is in the host\'s folder')
  if (process.getuid?.() === 0) assert.equal(statSync(join(folder, 'first-api-key')).mode & 0o777, 0o600)
  await podman('stop', '--time', '20', names[1]!)
  assert.equal(await podman('inspect', names[1]!, '--format', '{{.State.ExitCode}}'), '0')
})

imageTest('petstore backup runs inside the image while it serves: a checked 0600 copy on the volume, without a sqlite3 binary; restore is refused while it serves, and run in a container of its own once it is stopped gives the copy back', { timeout: 20 * 60_000 }, async (t) => {
  const suffix = randomBytes(4).toString('hex')
  const image = `localhost/petstore:test-backup-${suffix}`
  const name = `petstore-test-backup-${suffix}`
  t.after(async () => {
    await podman('rm', '--force', name).catch(() => {})
    await podman('volume', 'rm', '--force', name).catch(() => {})
    await podman('rmi', '--force', image).catch(() => {})
  })
  await buildImage(t, image)
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  await podman('run', '--detach', '--name', name, '--network', 'host', '--env', `PORT=${port}`, '--env', 'HOST=127.0.0.1',
    '--env', 'METRICS_PORT=0', '--volume', `${name}:/data`, image)
  await waitReady(origin)
  const key = await podman('exec', name, 'cat', KEY_FILE)
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const create = async (body: string) => {
    const reply = await fetch(`${origin}/v1/pets`, { method: 'POST', headers, body })
    assert.equal(reply.status, 201)
    return await reply.json() as { id: number }
  }
  const kept = await create('{"name":"Kept","categoryId":5}')

  assert.notEqual(spawnSync('podman', ['exec', name, 'sh', '-c', 'command -v sqlite3']).status, 0, 'the image has no sqlite3')
  const backedUp = await podman('exec', name, 'node', 'src/cli.ts', 'backup', '/data/backups/petstore.db')
  assert.match(backedUp, /^backed up sqlite:\/data\/petstore\.db to \/data\/backups\/petstore\.db \([\d.]+ KiB, mode 0600\): 1 pet, 1 key, migration \d+; integrity_check ok$/)
  assert.equal(await podman('exec', name, 'stat', '-c', '%a %u:%g', '/data/backups', '/data/backups/petstore.db'), '700 10001:10001\n600 10001:10001')

  const refused = await run('podman', ['exec', name, 'node', 'src/cli.ts', 'restore', '/data/backups/petstore.db']).then(() => undefined, (error: { code: number, stderr: string }) => error)
  assert.deepEqual({ code: refused?.code, stderr: refused?.stderr }, {
    code: 1,
    stderr: 'petstore restore: DATABASE_URL sqlite:/data/petstore.db is open in another process (the service, or another command): stop it, then restore again; nothing was changed\n'
  })

  const later = await create('{"name":"After the backup","categoryId":6}')
  await podman('stop', '--time', '20', name)
  const restored = await podman('run', '--rm', '--volume', `${name}:/data`, '--entrypoint', 'node', image, 'src/cli.ts', 'restore', '/data/backups/petstore.db')
  assert.match(restored, /^restored sqlite:\/data\/petstore\.db from \/data\/backups\/petstore\.db: 1 pet, 1 key, migration \d+; the database it replaced is kept at \/data\/petstore\.db\.before-restore-\d{8}T\d{6}Z \(mode 0600\)$/)
  await podman('start', name)
  await waitReady(origin)
  const found = await Promise.all([kept, later].map(async (pet) => (await fetch(`${origin}/v1/pets/${pet.id}`, { headers })).status))
  assert.deepEqual(found, [200, 404], 'the pet of the backup is back; the one created after it is gone')
})
