import { spawn, spawnSync } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LoadResult } from './load.ts'

/**
 * wrk, when installed (Debian: apt-get install wrk), drives the load: one C thread with an
 * event loop of its own drives all the connections with a fraction of the CPU that autocannon,
 * a Node process, needs for the same requests. autocannon keeps most of a core busy at the
 * servers' rates, so it caps the faster server (the baseline) more than the slower one, and
 * every ratio comes out too kind.
 */
export const wrkVersion: string | undefined = (() => {
  const run = spawnSync('wrk', ['--version'], { encoding: 'utf8' })
  // wrk prints its version and usage, then exits with 1: only a missing binary is an error.
  return run.error ? undefined : /^wrk (\S+)/m.exec(run.stdout + run.stderr)?.[1] ?? 'unknown'
})()

/**
 * Prints the summary as one JSON line. `latency` is wrk's record of every response's time in
 * microseconds; `errors.status` counts responses with a status of 400 or more.
 */
const DONE = `
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n{"requests":%d,"micros":%d,"p50":%d,"p99":%d,"status":%d,"socket":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
`

/** A Lua string literal of printable ASCII (what every path, header and key here is). */
export function luaString (text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error(`not printable ASCII: ${JSON.stringify(text)}`)
  return `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
}

/**
 * Runs wrk with one thread for `duration` seconds (whole seconds: all wrk takes) with the
 * script, which defines request() and may take a random seed as init's first argument: each
 * run gets its own, so two runs started in the same second do not send the same ids.
 */
export async function runWrk (url: string, script: string, options: { connections: number, duration: number }): Promise<LoadResult> {
  if (!Number.isInteger(options.duration) || options.duration < 1) throw new Error(`wrk runs for whole seconds, not ${options.duration}`)
  const dir = mkdtempSync(join(tmpdir(), 'petstore-wrk-'))
  try {
    const file = join(dir, 'load.lua')
    writeFileSync(file, script + DONE)
    const seed = randomInt(1, 2 ** 31)
    const args = ['-t1', `-c${options.connections}`, `-d${options.duration}s`, '--timeout', '10s', '-s', file, url, '--', String(seed)]
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      let err = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => { err += chunk })
      child.on('error', reject)
      child.on('close', (code) => code === 0 ? resolve(out) : reject(new Error(`wrk exited with ${code}: ${out}${err}`)))
    })
    // done() prints the summary last, on a line of its own.
    const line = output.split('\n').findLast((text) => text.startsWith('{"requests":'))
    if (!line) throw new Error(`wrk printed no summary: ${output}`)
    const summary = JSON.parse(line) as { requests: number, micros: number, p50: number, p99: number, status: number, socket: number }
    return {
      requests: summary.requests,
      rps: summary.requests / (summary.micros / 1e6),
      p50: summary.p50 / 1000,
      p99: summary.p99 / 1000,
      errorStatuses: summary.status,
      errors: summary.socket
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
