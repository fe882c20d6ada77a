import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli, tempDir } from '../helpers/processes.ts'

const ROOT = new URL('../..', import.meta.url).pathname
// More than a pipe holds (64 KiB on Linux), so the export is still writing when the reader leaves.
const PETS = 20_000

test('pets export into a reader that stops after the first line (| head -1) ends quietly with exit 0', async (t) => {
  const dir = tempDir(t)
  const env = { DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}` }
  const file = join(dir, 'pets.jsonl')
  writeFileSync(file, Array.from({ length: PETS }, (_, i) => JSON.stringify({ name: `pet ${i + 1}`, categoryId: 7 }) + '\n').join(''))
  assert.equal((await runCli(['pets', 'import', file], env)).code, 0)

  const child = spawn(process.execPath, ['src/cli.ts', 'pets', 'export'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
  const [first] = await once(child.stdout, 'data') as [Buffer]
  child.stdout.destroy()
  const [code, signal] = await once(child, 'close') as [number | null, string | null]

  assert.equal(first.toString().split('\n')[0], '{"id":1,"name":"pet 1","categoryId":7}')
  assert.deepEqual({ code, signal, stderr }, { code: 0, signal: null, stderr: '' })
})
