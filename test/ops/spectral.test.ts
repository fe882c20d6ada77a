import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { buildTestApp } from '../helpers/app.ts'

const ROOT = new URL('../..', import.meta.url).pathname
const SPECTRAL = join(ROOT, 'node_modules/.bin/spectral')

/** The warnings README.md ("Accepted Spectral findings") lists with its reasons; anything new fails. */
const ACCEPTED_WARNINGS = [
  'owasp:api1:2023-no-numeric-ids paths./pets/{petId}.get.parameters.0.schema',
  'owasp:api4:2023-string-restricted components.schemas.Error.properties.details.items.properties.message',
  'owasp:api4:2023-string-restricted components.schemas.Error.properties.message'
]

interface Finding { code: string, path: string[], severity: number, message: string }

test('the served OpenAPI document passes the OWASP API security ruleset of Spectral: no error, only the accepted warnings', { timeout: 120_000 }, async (t) => {
  const { app } = await buildTestApp(t)
  const served = await app.inject({ url: '/v1/openapi.json' })
  const dir = mkdtempSync(join(tmpdir(), 'petstore-spectral-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'openapi.json'), served.body)
  // Exit code 1 means findings at error severity; the JSON report says which.
  const run = await promisify(execFile)(SPECTRAL, ['lint', join(dir, 'openapi.json'), '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet'], { cwd: ROOT })
    .catch((failure: { stdout?: string, stderr?: string }) => ({ stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' }))
  const findings = JSON.parse(run.stdout || '[]') as Finding[]
  const describe = (finding: Finding) => `${finding.code} ${finding.path.join('.')}`
  assert.deepEqual(findings.filter((finding) => finding.severity === 0).map((finding) => `${describe(finding)}: ${finding.message}`), [], run.stderr)
  assert.deepEqual(findings.filter((finding) => finding.severity === 1).map(describe).sort(), ACCEPTED_WARNINGS)
})
