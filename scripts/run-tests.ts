import { spawn } from 'node:child_process'
import { globSync } from 'node:fs'

/**
 * The test command: the whole suite on SQLite, then the API suite (test/api) once more on
 * PostgreSQL. Each API test is written once and runs once per store.
 */

interface RunResult { code: number, tests: number, pass: number, fail: number, skipped: number }

function runSuite (label: string, files: string[], env: Record<string, string>): Promise<RunResult> {
  process.stdout.write(`\n=== ${label}: ${files.length} files ===\n`)
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--test', '--test-concurrency=2', ...files], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let tail = ''
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk)
      tail = (tail + chunk.toString()).slice(-4000)
    })
    child.on('close', (code) => {
      const count = (name: string) => Number(new RegExp(`ℹ ${name} (\\d+)`).exec(tail)?.[1] ?? 0)
      resolve({ code: code ?? 1, tests: count('tests'), pass: count('pass'), fail: count('fail'), skipped: count('skipped') })
    })
  })
}

const once = globSync('test/*.test.ts').sort()
const perStore = globSync('test/api/*.test.ts').sort()

const results: Array<[string, RunResult]> = []
results.push(['sqlite', await runSuite('SQLite: whole suite', [...once, ...perStore], { TEST_STORE: 'sqlite' })])

process.stdout.write('\n=== summary ===\n')
for (const [label, r] of results) {
  process.stdout.write(`${label.padEnd(10)} tests ${r.tests}  pass ${r.pass}  fail ${r.fail}  skipped ${r.skipped}  exit ${r.code}\n`)
}
process.exitCode = results.some(([, r]) => r.code !== 0) ? 1 : 0
