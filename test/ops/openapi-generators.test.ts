import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { promisify } from 'node:util'
import { buildTestApp } from '../helpers/app.ts'

const ROOT = new URL('../..', import.meta.url).pathname
const OPENAPI = join(ROOT, 'openapi.json')
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name)
/** Each step (generate, type-check, call the service) is one child process, stopped if it hangs. */
const STEP_TIMEOUT_MS = 90_000

/**
 * A third-party generator: how it writes a client from a document into `client/`, and a
 * script that calls the service through that client the way its README shows, printing a
 * Trace as JSON. The script is type-checked with the client, so a header parameter the
 * generated types lost fails the test before any request is made.
 */
interface Generator {
  name: string
  generate(dir: string, input: string, baseUrl: string): Promise<void>
  usage(baseUrl: string, key: string): string
}

/** What one revalidation looked like through a generated client. */
interface Exchange { status: number, etag: string | null, cacheControl: string | null, data?: unknown, error?: unknown }
interface Trace { created: number, getPet: Exchange, getPetAgain: Exchange, listPets: Exchange, listPetsAgain: Exchange }

const run = (args: string[], cwd: string) =>
  promisify(execFile)(process.execPath, args, { cwd, timeout: STEP_TIMEOUT_MS, killSignal: 'SIGKILL' })

/** Reads what a generated client hands back into an Exchange; written once, pasted into each script. */
const EXCHANGE = `
const exchange = (response: Response, more: { data?: unknown, error?: unknown }) => ({
  status: response.status, etag: response.headers.get('etag'), cacheControl: response.headers.get('cache-control'), ...more
})
`

const openapiTypescript: Generator = {
  name: 'openapi-typescript with openapi-fetch',
  async generate (dir, input) {
    await run([bin('openapi-typescript'), input, '-o', join(dir, 'client/schema.ts')], dir)
  },
  usage: (baseUrl, key) => `
import createClient from 'openapi-fetch'
import type { paths } from './client/schema.js'
${EXCHANGE}
const client = createClient<paths>({ baseUrl: ${JSON.stringify(baseUrl)}, headers: { authorization: ${JSON.stringify(`Bearer ${key}`)} } })
const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 7 } })
if (created.data === undefined) throw new Error('createPet failed: ' + JSON.stringify(created.error))
const path = { petId: created.data.id }
const first = await client.GET('/pets/{petId}', { params: { path } })
const again = await client.GET('/pets/{petId}', { params: { path, header: { 'If-None-Match': first.response.headers.get('etag') ?? '' } } })
const list = await client.GET('/pets', {})
const listAgain = await client.GET('/pets', { params: { header: { 'If-None-Match': list.response.headers.get('etag') ?? '' } } })
console.log(JSON.stringify({
  created: created.response.status,
  getPet: exchange(first.response, { data: first.data }),
  getPetAgain: exchange(again.response, { data: again.data, error: again.error }),
  listPets: exchange(list.response, { data: list.data }),
  listPetsAgain: exchange(listAgain.response, { data: listAgain.data, error: listAgain.error })
}))
`
}

const heyApi: Generator = {
  name: '@hey-api/openapi-ts with its fetch client',
  async generate (dir, input) {
    await run([bin('openapi-ts'), '-i', input, '-o', join(dir, 'client'), '-c', '@hey-api/client-fetch', '--silent', '--no-log-file'], dir)
  },
  usage: (baseUrl, key) => `
import { client } from './client/client.gen.js'
import { createPet, getPet, listPets } from './client/sdk.gen.js'
${EXCHANGE}
// Without throwOnError a failed request resolves with no response and the reason in \`error\`.
const answered = <T extends { response?: Response, error?: unknown }>(result: T) => {
  if (result.response === undefined) throw new Error('no response: ' + String(result.error))
  return { ...result, response: result.response }
}
client.setConfig({ baseUrl: ${JSON.stringify(baseUrl)}, auth: ${JSON.stringify(key)} })
const created = answered(await createPet({ body: { name: 'Rex', categoryId: 7 } }))
if (created.data === undefined) throw new Error('createPet failed: ' + JSON.stringify(created.error))
const path = { petId: created.data.id }
const first = answered(await getPet({ path }))
const again = answered(await getPet({ path, headers: { 'If-None-Match': first.response.headers.get('etag') ?? '' } }))
const list = answered(await listPets())
const listAgain = answered(await listPets({ headers: { 'If-None-Match': list.response.headers.get('etag') ?? '' } }))
console.log(JSON.stringify({
  created: created.response.status,
  getPet: exchange(first.response, { data: first.data }),
  getPetAgain: exchange(again.response, { data: again.data, error: again.error }),
  listPets: exchange(list.response, { data: list.data }),
  listPetsAgain: exchange(listAgain.response, { data: listAgain.data, error: listAgain.error })
}))
`
}

const orval: Generator = {
  name: 'orval with its fetch client',
  async generate (dir, input, baseUrl) {
    // orval writes the base URL into the client; the server is listening before generation.
    const output = { target: './client/petstore.ts', client: 'fetch', mode: 'single', headers: true, baseUrl }
    writeFileSync(join(dir, 'orval.config.mjs'), `export default ${JSON.stringify({ petstore: { input: { target: input }, output } })}\n`)
    await run([bin('orval'), '--config', 'orval.config.mjs', '--log-level', 'error'], dir)
  },
  usage: (_baseUrl, key) => `
import { createPet, getPet, listPets } from './client/petstore.js'
const auth = { headers: { authorization: ${JSON.stringify(`Bearer ${key}`)} } }
const created = await createPet({ name: 'Rex', categoryId: 7 }, undefined, auth)
if (created.status !== 201) throw new Error('createPet failed: ' + JSON.stringify(created.data))
const petId = created.data.id
const first = await getPet(petId, undefined, auth)
const again = await getPet(petId, { 'If-None-Match': first.headers.get('etag') ?? '' }, auth)
const list = await listPets(undefined, undefined, auth)
const listAgain = await listPets(undefined, { 'If-None-Match': list.headers.get('etag') ?? '' }, auth)
const seen = (reply: { status: number, data: unknown, headers: Headers }) => ({
  status: reply.status, etag: reply.headers.get('etag'), cacheControl: reply.headers.get('cache-control'), data: reply.data
})
console.log(JSON.stringify({ created: created.status, getPet: seen(first), getPetAgain: seen(again), listPets: seen(list), listPetsAgain: seen(listAgain) }))
`
}

/**
 * Generates a client from `input` into a temporary folder, type-checks it together with the
 * usage script (strict, NodeNext, DOM types: a browser-like fetch client), and runs the script
 * against `baseUrl`. tsc emits JavaScript as it checks (noEmitOnError): generated files import
 * each other as `./x.js`, which Node's type stripping cannot resolve to `./x.ts`.
 */
async function traceThrough (t: TestContext, generator: Generator, input: string, baseUrl: string, key: string): Promise<Trace> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-generator-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  await generator.generate(dir, input, baseUrl)
  writeFileSync(join(dir, 'use.ts'), generator.usage(baseUrl, key))
  const compilerOptions = {
    strict: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    lib: ['es2022', 'dom', 'dom.iterable'],
    types: [],
    outDir: 'dist',
    noEmitOnError: true
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['client', 'use.ts'] }))
  await run([bin('tsc'), '-p', dir], dir)
  const { stdout } = await run([join(dir, 'dist/use.js')], dir)
  return JSON.parse(stdout) as Trace
}

const ETAG = /^"[A-Za-z0-9_-]{22}"$/

/**
 * Checks the create and the first reads, the same through every client, and returns what each
 * 304 must carry: its status, the first reply's ETag and Cache-Control. How a client reports
 * the 304's missing body differs, so each test adds that part.
 */
function assertFirstReplies (trace: Trace) {
  const pet = { id: (trace.getPet.data as { id: number }).id, name: 'Rex', categoryId: 7 }
  assert.equal(trace.created, 201)
  assert.match(String(trace.getPet.etag), ETAG)
  assert.match(String(trace.listPets.etag), ETAG)
  assert.deepEqual(trace.getPet, { status: 200, etag: trace.getPet.etag, cacheControl: 'private, max-age=31536000, immutable', data: pet })
  assert.deepEqual(trace.listPets, { status: 200, etag: trace.listPets.etag, cacheControl: 'private, no-cache', data: [pet] })
  return { getPet: { status: 304, etag: trace.getPet.etag, cacheControl: trace.getPet.cacheControl }, listPets: { status: 304, etag: trace.listPets.etag, cacheControl: trace.listPets.cacheControl } }
}

async function listeningApp (t: TestContext) {
  const { app, key } = await buildTestApp(t)
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  return { baseUrl: `${address}/v1`, key }
}

test(`${openapiTypescript.name}: If-None-Match with the ETag gets 304, reported as an error with an empty body`, { timeout: 240_000 }, async (t) => {
  const { baseUrl, key } = await listeningApp(t)
  const trace = await traceThrough(t, openapiTypescript, OPENAPI, baseUrl, key)
  const expected = assertFirstReplies(trace)
  // openapi-fetch puts every status outside 200–299 in `error`, read as text: a 304 has none.
  assert.deepEqual(trace.getPetAgain, { ...expected.getPet, error: '' })
  assert.deepEqual(trace.listPetsAgain, { ...expected.listPets, error: '' })
})

test(`${heyApi.name}: If-None-Match with the ETag gets 304, reported as the error {}`, { timeout: 240_000 }, async (t) => {
  const { baseUrl, key } = await listeningApp(t)
  const trace = await traceThrough(t, heyApi, OPENAPI, baseUrl, key)
  const expected = assertFirstReplies(trace)
  // Its client puts every status outside 200–299 in `error` and turns an empty one into {}; it does not throw.
  assert.deepEqual(trace.getPetAgain, { ...expected.getPet, error: {} })
  assert.deepEqual(trace.listPetsAgain, { ...expected.listPets, error: {} })
})

test(`${orval.name}: If-None-Match with the ETag gets status 304 and data {}`, { timeout: 240_000 }, async (t) => {
  const { baseUrl, key } = await listeningApp(t)
  const trace = await traceThrough(t, orval, OPENAPI, baseUrl, key)
  const expected = assertFirstReplies(trace)
  // orval skips reading the body of a 304 and hands back {}, though its types say `void`.
  assert.deepEqual(trace.getPetAgain, { ...expected.getPet, data: {} })
  assert.deepEqual(trace.listPetsAgain, { ...expected.listPets, data: {} })
})
