import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'

/** Why the formation cannot be made here: under CI (CI=true) a failure, else a loud skip. */
export function skipOrFail (t: TestContext, reason: string | undefined): boolean {
  if (reason === undefined) return false
  if (process.env.CI === 'true') assert.fail(reason)
  process.stderr.write(`\n*** SKIPPED the failover test: ${reason} ***\n\n`)
  t.skip(reason)
  return true
}
