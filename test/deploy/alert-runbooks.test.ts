import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { writeBackupMetrics } from '../../src/cli/backup-metrics.ts'
import { tempDir } from '../helpers/processes.ts'

/**
 * What an on-call gets with each alert: a runbook_url that leads to the alert's own section of
 * docs/operations/alerts.md, and, for the backup alert, a metric the backup command does write.
 */

const ROOT = new URL('../..', import.meta.url).pathname
const RUNBOOKS = 'docs/operations/alerts.md'

interface Rule { alert?: string, record?: string, expr: string, annotations?: Record<string, string> }

function rules (): Rule[] {
  const file = parse(readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8')) as { groups: Array<{ rules: Rule[] }> }
  return file.groups.flatMap((group) => group.rules)
}

/** The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces to hyphens. */
function headingAnchors (): Set<string> {
  const text = readFileSync(join(ROOT, RUNBOOKS), 'utf8')
  return new Set([...text.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^\p{L}\p{N}_ -]/gu, '').replaceAll(' ', '-')))
}

test('every alert has a runbook_url into docs/operations/alerts.md, at the anchor of a heading named after it', () => {
  const anchors = headingAnchors()
  const alerts = rules().filter((rule) => rule.alert !== undefined)
  assert.ok(alerts.length >= 22, `alerts were found (${alerts.length})`)
  const wrong = alerts.flatMap((rule) => {
    const url = rule.annotations?.runbook_url
    const expected = `${RUNBOOKS}#${rule.alert!.toLowerCase()}`
    if (url !== expected) return [`${rule.alert}: runbook_url ${JSON.stringify(url)}, expected ${JSON.stringify(expected)}`]
    const anchor = url.slice(url.indexOf('#') + 1)
    return anchors.has(anchor) ? [] : [`${rule.alert}: ${RUNBOOKS} has no heading with the anchor ${anchor}`]
  })
  assert.deepEqual(wrong, [])
})

test('the petstore_backup_ metrics the alert rules read are ones petstore backup --metrics-file writes', (t) => {
  const file = join(tempDir(t), 'petstore_backup.prom')
  writeBackupMetrics(file, { ok: true, at: new Date(), bytes: 1, seconds: 1 })
  const written = new Set([...readFileSync(file, 'utf8').matchAll(/^# TYPE (\S+) gauge$/gm)].map((m) => m[1]!))
  const read = [...new Set(rules().flatMap((rule) => rule.expr.match(/petstore_backup_[a-z_]+/g) ?? []))]
  assert.deepEqual(read, ['petstore_backup_last_success_timestamp_seconds'])
  assert.deepEqual(read.filter((name) => !written.has(name)), [])
})
