import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { startServer } from './servers.ts'

const README = new URL('../../README.md', import.meta.url)
const CLIENT_PACKAGE = new URL('..', import.meta.url).pathname

/** The first ```ts block of the README's Client section, exactly as a newcomer copies it. */
function readmeExample (): string {
  const readme = readFileSync(README, 'utf8')
  const section = readme.slice(readme.indexOf('\n## Client\n'))
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  assert.ok(block, 'the README has a Client section with a ts example')
  return block
}

test('the README\'s five-line client example runs as written against a real server, through the built package', async (t) => {
  const example = readmeExample()
  assert.equal(example.trim().split('\n').length, 5)
  const { baseUrl, key } = await startServer(t)
  // A folder outside the repository where `@petstore/client` resolves to the workspace package.
  const folder = mkdtempSync(join(tmpdir(), 'petstore-readme-'))
  t.after(() => rmSync(folder, { recursive: true, force: true }))
  mkdirSync(join(folder, 'node_modules', '@petstore'), { recursive: true })
  symlinkSync(CLIENT_PACKAGE, join(folder, 'node_modules', '@petstore', 'client'))
  writeFileSync(join(folder, 'package.json'), '{"type":"module"}')
  writeFileSync(join(folder, 'try.ts'), example)

  const run = () => promisify(execFile)(process.execPath, ['try.ts'], { cwd: folder, env: { ...process.env, PETSTORE_URL: baseUrl, PETSTORE_KEY: key }, timeout: 20_000 })
  assert.deepEqual(await run(), { stdout: '#1 Rex\ncreated #1\n', stderr: '' })
  assert.deepEqual(await run(), { stdout: '#1 Rex\n#2 Rex\ncreated #2\n', stderr: '' })
})
