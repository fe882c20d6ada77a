import { readFileSync } from 'node:fs'
import { Command } from 'commander'
import { Failure, fileProblem, note, print, UsageError } from './output.ts'
import { runChecks, runReadOnlyChecks, type ProbeCheck } from './probe-checks.ts'

/** probe: the post-deploy check of an environment, through the address its clients use. */

const DEFAULT_TIMEOUT_MS = 10_000
// The interface's base addresses include the version: https://api.example.com/v1.
const BASE_URL = /^https?:\/\/[^\s?#/]+(\/[^\s?#]*)?\/v1\/*$/

interface ProbeOptions { key?: string, keyFile?: string, json?: boolean, timeout?: string, readOnly?: boolean }

type Env = Record<string, string | undefined>

export function probeCommand (env: Env = process.env): Command {
  return new Command('probe')
    .description('Check a deployed environment through its base address (ending in /v1): create a pet with an Idempotency-Key and repeat it, ' +
      'find it in a listing, get it (getPet, deprecated), and get a 401 without a key and a 404, both with the Error body. One line per check ' +
      'with its time, skip for one that could not run as the check it needs failed; exit 1 when any fails. Each run adds one pet, with status sold; --read-only writes nothing. Needs no DATABASE_URL. ' +
      'The key of that environment comes from PETSTORE_KEY or --key-file, not the command line, where other accounts (ps), shell history and CI logs see it.')
    .usage('BASE_URL [--read-only] [--key-file FILE] [--json] [--timeout MS]')
    .argument('[baseUrl]')
    .option('--read-only', 'only read: list, get the first pet listed, a 401 and a 404; creates nothing, so it can run every minute with a read key')
    .option('--key-file <FILE>', 'read the API key from FILE (its first line); instead of PETSTORE_KEY')
    .option('--key <KEY>', 'the API key itself: discouraged, as the command line is visible to other accounts and kept in shell history')
    .option('--json', 'print {"ok": …, "checks": [{"name", "ok", "ms", "detail"}]}; a check that did not run has "skipped": true')
    .option('--timeout <MS>', `how long one reply may take, in milliseconds (default ${DEFAULT_TIMEOUT_MS})`)
    .action(async (text: string | undefined, options: ProbeOptions) => probe(text, options, env))
}

async function probe (text: string | undefined, options: ProbeOptions, env: Env): Promise<void> {
  if (text === undefined || !BASE_URL.test(text)) {
    throw new UsageError(`expected the base address, ending in /v1 (https://api.example.com/v1); got ${JSON.stringify(text ?? '')}`)
  }
  const timeoutMs = timeoutOf(options.timeout)
  const key = keyOf(options, env)
  const baseUrl = text.replace(/\/+$/, '')
  const checks = await (options.readOnly ? runReadOnlyChecks : runChecks)({ baseUrl, key, timeoutMs })
  const failed = checks.filter((check) => !check.ok && !check.skipped)
  const skipped = checks.filter((check) => check.skipped)
  const ok = failed.length === 0
  // Under --json a failure is one document: the report with the CLI's error object beside it.
  if (options.json && ok) print(JSON.stringify({ ok, checks }))
  if (!options.json) for (const check of checks) print(checkLine(check))
  const names = (list: ProbeCheck[]) => list.map((check) => check.name).join(', ')
  const skips = skipped.length ? `; ${skipped.length} skipped: ${names(skipped)}` : ''
  if (!ok) throw new Failure(`${failed.length} of ${checks.length} checks failed: ${names(failed)}${skips}`, 'failed', { ok, checks })
  if (options.json) return
  note(skipped.length ? `${checks.length - skipped.length} of ${checks.length} checks passed${skips}, on ${baseUrl}` : `all ${checks.length} checks passed on ${baseUrl}`)
}

/**
 * The key: --key-file, else --key (kept for the scripts that pass it), else PETSTORE_KEY. Given
 * two ways on the command line, neither is guessed at.
 */
function keyOf (options: ProbeOptions, env: Env): string {
  if (options.keyFile !== undefined && options.key !== undefined) throw new UsageError('give the key one way: --key-file or --key, not both')
  if (options.keyFile !== undefined) return keyFromFile(options.keyFile)
  if (options.key) return options.key
  if (env.PETSTORE_KEY) return env.PETSTORE_KEY
  throw new UsageError('no API key: set PETSTORE_KEY or give --key-file FILE')
}

/** The file's first line, without its line end: what `keys create > FILE` writes. */
function keyFromFile (path: string): string {
  let text
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new Failure(`cannot read the key file ${path}: ${fileProblem(error as NodeJS.ErrnoException, 'file')}`, 'cannot_read')
  }
  const key = text.split(/\r?\n/, 1)[0]!.trim()
  if (key === '') throw new Failure(`the key file ${path} holds no key on its first line`, 'cannot_read')
  return key
}

function timeoutOf (text: string | undefined): number {
  if (text === undefined) return DEFAULT_TIMEOUT_MS
  if (!/^[1-9]\d{0,6}$/.test(text)) throw new UsageError(`--timeout needs a whole number of milliseconds from 1 to 9999999; got ${JSON.stringify(text)}`)
  return Number(text)
}

/** `ok    listPets            12 ms  200, the new pet listed with status=sold`; `skip  getPet               -     listPets failed` */
const checkLine = ({ name, ok, skipped, ms, detail }: ProbeCheck) => skipped
  ? `${'skip'.padEnd(6)}${name.padEnd(18)}${'-'.padStart(6)}     ${detail}`
  : `${(ok ? 'ok' : 'FAIL').padEnd(6)}${name.padEnd(18)}${String(ms).padStart(6)} ms  ${detail}`
