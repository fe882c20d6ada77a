import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { runCli, tempDir } from '../helpers/processes.ts'

/**
 * petstore-backup.timer and .service: a daily, persistent timer; a service as hardened as
 * petstore.service that may write exactly the folders its command writes; and that command, run
 * as systemd would with this repository as the install, takes a backup and writes its metrics.
 * (test/deploy/systemd.test.ts runs systemd-analyze verify on every unit, these included.)
 */

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '')
const UNITS = join(ROOT, 'deploy/systemd')
const INSTALL = '/opt/petstore'

/** A unit's settings by section: each key's values in order (Environment= may repeat). */
function unitSettings (file: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>()
  let current = new Map<string, string[]>()
  for (const line of readFileSync(join(UNITS, file), 'utf8').split('\n')) {
    const section = /^\[(\w+)\]$/.exec(line)
    if (section) sections.set(section[1]!, current = new Map())
    const setting = /^(\w+)=(.*)$/.exec(line)
    if (setting) current.set(setting[1]!, [...current.get(setting[1]!) ?? [], setting[2]!])
  }
  return sections
}

const one = (settings: Map<string, string[]> | undefined, key: string) => settings?.get(key)?.join(' ')

/** The value after `option` on a command line. */
const optionOf = (command: string, option: string) => new RegExp(`${option} (\\S+)`).exec(command)?.[1]

test('petstore-backup.timer starts the backup daily, catches up a missed run at boot and spreads the start', () => {
  const timer = unitSettings('petstore-backup.timer')
  assert.deepEqual(
    ['OnCalendar', 'Persistent', 'RandomizedDelaySec', 'Unit'].map((key) => [key, one(timer.get('Timer'), key)]),
    [['OnCalendar', 'daily'], ['Persistent', 'true'], ['RandomizedDelaySec', '1h'], ['Unit', undefined]],
    'no Unit=: it starts the service of its own name'
  )
  assert.equal(one(timer.get('Install'), 'WantedBy'), 'timers.target')
})

test('petstore-backup.service is as hardened as petstore.service, on its store, and may write only the folders its command writes', () => {
  const backup = unitSettings('petstore-backup.service').get('Service')!
  const service = unitSettings('petstore.service').get('Service')!
  const hardening = ['User', 'Group', 'WorkingDirectory', 'EnvironmentFile', 'StateDirectory', 'StateDirectoryMode', 'NoNewPrivileges', 'ProtectSystem', 'ProtectHome', 'PrivateTmp',
    'PrivateDevices', 'ProtectKernelTunables', 'ProtectKernelModules', 'ProtectKernelLogs', 'ProtectControlGroups', 'ProtectClock', 'ProtectHostname', 'ProtectProc',
    'RestrictAddressFamilies', 'RestrictNamespaces', 'RestrictRealtime', 'RestrictSUIDSGID', 'LockPersonality', 'CapabilityBoundingSet', 'SystemCallArchitectures',
    'SystemCallFilter', 'SystemCallErrorNumber', 'UMask']
  assert.deepEqual(hardening.map((key) => [key, one(backup, key)]), hardening.map((key) => [key, one(service, key)]))
  assert.equal(one(backup, 'Type'), 'oneshot')
  const databaseUrl = (settings: Map<string, string[]>) => settings.get('Environment')?.find((line) => line.startsWith('DATABASE_URL='))
  assert.equal(databaseUrl(backup), databaseUrl(service), 'the database the service serves')

  const command = one(backup, 'ExecStart')!
  assert.match(command, new RegExp(`^${INSTALL}/node_modules/node/bin/node src/cli\\.ts backup --dir \\S+ --keep \\d+ --keep-daily \\d+ --metrics-file \\S+\\.prom$`))
  assert.deepEqual(one(backup, 'ReadWritePaths')?.split(' '), [optionOf(command, '--dir'), dirname(optionOf(command, '--metrics-file')!)])
})

test('petstore-backup.service\'s command, run as systemd would with this repository as the install, writes a backup into its folder and the metrics file', async (t) => {
  const service = unitSettings('petstore-backup.service').get('Service')!
  const folder = tempDir(t)
  const command = one(service, 'ExecStart')!
  const backups = optionOf(command, '--dir')!
  const textfiles = dirname(optionOf(command, '--metrics-file')!)
  // The unit's paths, moved: the install is this repository, the folders temporary.
  const place = (text: string) => text.replaceAll(INSTALL, ROOT).replaceAll('/var/lib/petstore', join(folder, 'state'))
    .replaceAll(backups, join(folder, 'backups')).replaceAll(textfiles, join(folder, 'textfile'))
  for (const made of ['backups', 'textfile']) mkdirSync(join(folder, made), { mode: 0o700 })
  const environment = Object.fromEntries((service.get('Environment') ?? []).map((line) => place(line).split(/=(.*)/s).slice(0, 2) as [string, string]))
  const lines = join(folder, 'pets.jsonl')
  writeFileSync(lines, '{"name":"Kept","categoryId":1}\n')
  assert.equal((await runCli(['pets', 'import', lines], { DATABASE_URL: environment.DATABASE_URL! })).code, 0)

  const [program, ...args] = place(command).split(' ')
  const child = spawn(program!, args, { cwd: place(one(service, 'WorkingDirectory')!), env: { ...environment, PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout.on('data', (chunk: Buffer) => { log += chunk })
  child.stderr.on('data', (chunk: Buffer) => { log += chunk })
  const [code] = await once(child, 'close') as [number | null]
  assert.equal(code, 0, log)

  const written = readdirSync(join(folder, 'backups'))
  assert.equal(written.length, 1)
  assert.match(written[0]!, /^petstore-\d{8}T\d{6}Z\.db$/)
  assert.match(log, new RegExp(`^backed up sqlite:${join(folder, 'state')}/petstore\\.db to ${join(folder, 'backups', written[0]!)} \\(.*\\): 1 pet, 0 keys, migration \\d+; integrity_check ok; removed no older backup\\n$`))
  const metrics = readFileSync(join(folder, 'textfile', 'petstore_backup.prom'), 'utf8')
  assert.match(metrics, new RegExp(`^petstore_backup_last_size_bytes ${statSync(join(folder, 'backups', written[0]!)).size}$`, 'm'))
  assert.match(metrics, /^petstore_backup_consecutive_failures 0$/m)
})
