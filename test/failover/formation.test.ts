import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'
import pg from 'pg'
import { createFormation, MONITOR_SETTINGS, pgAutoctlMissing } from './formation.ts'
import { skipOrFail } from './skip.ts'

/**
 * The formation the failover test stands on: a pg_auto_failover monitor and two PostgreSQL 15
 * nodes with a synchronous standby, a planned switchover, and the loss of the primary's machine
 * (SIGKILL to its pg_autoctl and every PostgreSQL process), after which the standby takes writes
 * and the old node comes back as the standby.
 */

test('a pg_auto_failover formation: synchronous standby, switchover, the primary killed and the standby promoted, the old node back as standby', { timeout: 240_000 }, async (t) => {
  if (skipOrFail(t, pgAutoctlMissing())) return
  const startedAt = performance.now()
  const formation = await createFormation()
  t.after(() => formation.destroy())
  t.diagnostic(`formation up in ${ms(performance.now() - startedAt)}; uri ${formation.uri}`)
  assert.match(formation.uri, /^postgres:\/\/postgres@127\.0\.0\.1:\d+,127\.0\.0\.1:\d+\/postgres\?target_session_attrs=read-write/)

  const monitor = new pg.Client({ connectionString: formation.monitorUrl })
  await monitor.connect()
  const { rows: settings } = await monitor.query<{ name: string, setting: string }>("SELECT name, setting FROM pg_settings WHERE name LIKE 'pgautofailover.%'")
  await monitor.end()
  for (const [name, value] of Object.entries(MONITOR_SETTINGS)) assert.equal(settings.find((row) => row.name === name)?.setting, String(value), name)

  const first = await formation.primary()
  assert.equal(first.name, 'node1')
  // Through the multi-host URI with libpq (psql), which finds the primary, whichever it is.
  const write = (value: string) => {
    execFileSync('psql', [formation.uri, '-v', 'ON_ERROR_STOP=1', '-qc', 'CREATE TABLE IF NOT EXISTS marks (value text PRIMARY KEY)', '-c', `INSERT INTO marks VALUES ('${value}')`],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 })
  }
  const marks = async (url: string) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const { rows } = await client.query<{ value: string, standby: boolean }>('SELECT value, pg_is_in_recovery() AS standby FROM marks ORDER BY value')
      return rows
    } finally { await client.end() }
  }
  write('before switchover')

  const switched = await formation.switchover()
  t.diagnostic(`switchover ${switched.from.name} -> ${switched.to.name} in ${ms(switched.ms)}`)
  assert.equal(switched.to.name, 'node2')
  write('after switchover')
  assert.deepEqual((await marks(switched.to.url)).map((row) => row.value), ['after switchover', 'before switchover'])

  const { node: killed, killedAt } = await formation.killPrimary()
  assert.equal(killed.name, 'node2')
  await formation.waitWritable(formation.nodes[0], 30_000)
  const promotedMs = performance.now() - killedAt
  t.diagnostic(`primary ${killed.name} killed: node1 took writes after ${ms(promotedMs)}`)
  // The acknowledged writes were on the synchronous standby before the primary went.
  write('after failover')
  assert.deepEqual((await marks(formation.nodes[0].url)).map((row) => row.value), ['after failover', 'after switchover', 'before switchover'])

  const rejoined = await formation.restartNode(killed)
  t.diagnostic(`${killed.name} back as the synchronous standby in ${ms(rejoined.ms)}`)
  const { primary, secondary } = await formation.waitSettled()
  assert.deepEqual([primary.name, secondary.name], ['node1', 'node2'])
  const onStandby = await marks(secondary.url)
  assert.deepEqual(onStandby.map((row) => row.value), ['after failover', 'after switchover', 'before switchover'])
  assert.ok(onStandby.every((row) => row.standby))
  t.diagnostic(`whole run ${ms(performance.now() - startedAt)}`)
})

const ms = (value: number) => `${Math.round(value)} ms`
