import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import { ConfigError, ConfigSchema, loadConfig, renamedSettings, SECRETS } from '../src/config.ts'
import { runCli, runToExit, startServer, tempDir } from './helpers/processes.ts'

const DEFAULTS = {
  PORT: 8080,
  HOST: '127.0.0.1',
  DATABASE_URL: 'sqlite:./data/petstore.db',
  DATABASE_POOL_MAX: 10,
  DATABASE_STATEMENT_TIMEOUT_MS: 5000,
  DATABASE_CONNECT_TIMEOUT_MS: 2000,
  REDIS_TIMEOUT_MS: 2000,
  LOG_LEVEL: 'info',
  DEPRECATION_DATE: '2026-01-01T00:00:00Z',
  SUNSET_DATE: '2030-12-05T00:00:00Z',
  SHUTDOWN_TIMEOUT_MS: 10000,
  KEY_CACHE_TTL_MS: 1000,
  REPLY_CACHE_ENTRIES: 10000,
  REPLY_CACHE_MAX_BYTES: 33554432,
  SHUTDOWN_DRAIN_MS: 5000,
  REDIS_KEY_PREFIX: 'petstore:',
  IDEMPOTENCY_TTL_HOURS: 24,
  RATE_LIMIT_PER_MINUTE: 1000,
  FAILED_AUTH_LIMIT_PER_MINUTE: 60,
  REQUEST_TIMEOUT_MS: 10000,
  HEADERS_TIMEOUT_MS: 5000,
  KEEP_ALIVE_TIMEOUT_MS: 5000,
  CONNECTIONS_CHECK_INTERVAL_MS: 1000,
  MAX_CONNECTIONS: 1024,
  MAX_EVENT_LOOP_DELAY_MS: 1000,
  REDIS_BREAKER_MS: 5000,
  SEND_TIMEOUT_MS: 30000,
  MAX_CONNECTIONS_PER_ADDRESS: 32,
  FIRST_BYTE_TIMEOUT_MS: 2000,
  METRICS_HOST: '127.0.0.1',
  METRICS_PORT: 9464
}
/** Variables with no default: unset means the feature is off or derived. */
const OPTIONAL = ['PUBLIC_URL', 'REDIS_URL', 'TRUST_PROXY', 'STAGING_URL', 'FIRST_KEY_FILE', ...SECRETS.map((name) => `${name}_FILE`)]

describe('loadConfig', () => {
  test('gives every variable its documented default, and leaves PUBLIC_URL and REDIS_URL unset', () => {
    assert.deepEqual(loadConfig({}), DEFAULTS)
  })

  test('treats an empty variable as unset', () => {
    assert.deepEqual(loadConfig(Object.fromEntries(Object.keys(DEFAULTS).map((name) => [name, '']))), DEFAULTS)
  })

  test('reads each variable that is set, and ignores variables it does not know', () => {
    const text = {
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://petstore@db.internal:5432/petstore',
      REDIS_URL: 'redis://cache.internal:6379',
      PUBLIC_URL: 'https://api.example.com/v1',
      LOG_LEVEL: 'silent',
      DEPRECATION_DATE: '2025-06-30T00:00:00Z',
      SUNSET_DATE: '2031-01-01T00:00:00+02:00',
      REDIS_KEY_PREFIX: 'staging:',
      TRUST_PROXY: '10.0.0.0/8',
      METRICS_HOST: '0.0.0.0',
      FIRST_KEY_FILE: '/run/petstore/first-api-key'
    }
    const numbers = {
      PORT: 0,
      DATABASE_POOL_MAX: 50,
      DATABASE_STATEMENT_TIMEOUT_MS: 250,
      DATABASE_CONNECT_TIMEOUT_MS: 300,
      REDIS_TIMEOUT_MS: 400,
      SHUTDOWN_TIMEOUT_MS: 0,
      KEY_CACHE_TTL_MS: 0,
      REPLY_CACHE_ENTRIES: 0,
      SHUTDOWN_DRAIN_MS: 0,
      IDEMPOTENCY_TTL_HOURS: 1,
      RATE_LIMIT_PER_MINUTE: 0,
      FAILED_AUTH_LIMIT_PER_MINUTE: 5,
      REQUEST_TIMEOUT_MS: 2000,
      HEADERS_TIMEOUT_MS: 1000,
      KEEP_ALIVE_TIMEOUT_MS: 100,
      CONNECTIONS_CHECK_INTERVAL_MS: 50,
      MAX_CONNECTIONS: 10,
      MAX_EVENT_LOOP_DELAY_MS: 0,
      REDIS_BREAKER_MS: 100,
      SEND_TIMEOUT_MS: 500,
      MAX_CONNECTIONS_PER_ADDRESS: 0,
      FIRST_BYTE_TIMEOUT_MS: 500,
      METRICS_PORT: 0,
      REPLY_CACHE_MAX_BYTES: 0
    }
    const env = { ...text, ...Object.fromEntries(Object.entries(numbers).map(([name, value]) => [name, String(value)])), PATH: '/usr/bin' }
    assert.deepEqual(loadConfig(env), { ...text, ...numbers })
  })

  test('drops the trailing slashes of PUBLIC_URL, so links never hold //', () => {
    assert.equal(loadConfig({ PUBLIC_URL: 'https://staging.example.com/v1//' }).PUBLIC_URL, 'https://staging.example.com/v1')
  })

  test('FIRST_BYTE_TIMEOUT_MS unset follows a HEADERS_TIMEOUT_MS below its default; set, it must not exceed it', () => {
    assert.equal(loadConfig({ HEADERS_TIMEOUT_MS: '300' }).FIRST_BYTE_TIMEOUT_MS, 300)
    assert.equal(loadConfig({ HEADERS_TIMEOUT_MS: '300', FIRST_BYTE_TIMEOUT_MS: '300' }).FIRST_BYTE_TIMEOUT_MS, 300)
    assert.throws(() => loadConfig({ HEADERS_TIMEOUT_MS: '300', FIRST_BYTE_TIMEOUT_MS: '2000' }), { message: 'FIRST_BYTE_TIMEOUT_MS must not exceed HEADERS_TIMEOUT_MS (got 2000 and 300)' })
  })

  test('a setting under its old name is still read while the new name is unset, with a warning naming the new one', () => {
    const env = { ANSWER_CACHE_ENTRIES: '7', ANSWER_CACHE_MAX_BYTES: '4096' }
    assert.deepEqual(loadConfig(env), { ...DEFAULTS, REPLY_CACHE_ENTRIES: 7, REPLY_CACHE_MAX_BYTES: 4096 })
    assert.deepEqual(renamedSettings(env), [
      { old: 'ANSWER_CACHE_ENTRIES', current: 'REPLY_CACHE_ENTRIES', used: true, message: 'ANSWER_CACHE_ENTRIES is now named REPLY_CACHE_ENTRIES; the old name is still read while REPLY_CACHE_ENTRIES is unset' },
      { old: 'ANSWER_CACHE_MAX_BYTES', current: 'REPLY_CACHE_MAX_BYTES', used: true, message: 'ANSWER_CACHE_MAX_BYTES is now named REPLY_CACHE_MAX_BYTES; the old name is still read while REPLY_CACHE_MAX_BYTES is unset' }
    ])
  })

  test('with both names set the new one wins and the warning says the old one is ignored; with neither, no warning', () => {
    const env = { ANSWER_CACHE_ENTRIES: '7', REPLY_CACHE_ENTRIES: '0', ANSWER_CACHE_MAX_BYTES: '' }
    assert.deepEqual(loadConfig(env), { ...DEFAULTS, REPLY_CACHE_ENTRIES: 0 })
    assert.deepEqual(renamedSettings(env), [
      { old: 'ANSWER_CACHE_ENTRIES', current: 'REPLY_CACHE_ENTRIES', used: false, message: 'ANSWER_CACHE_ENTRIES is now named REPLY_CACHE_ENTRIES, which is set too: ANSWER_CACHE_ENTRIES is ignored' }
    ])
    assert.deepEqual(renamedSettings({ REPLY_CACHE_ENTRIES: '7' }), [])
  })

  const V1_URL = (host: string) => `must be an absolute http:// or https:// address ending in /v1, without query or fragment, such as https://${host}.example.com/v1`
  const LOG_LEVELS = 'must be one of "fatal", "error", "warn", "info", "debug", "trace" or "silent"'
  const TRUST_ANY = 'TRUST_PROXY=true would let every client choose its own address; set the number of proxies in front (e.g. 1) or their comma-separated addresses/CIDRs (e.g. 10.0.0.5)'
  const BAD: Array<[env: Record<string, string>, message: string]> = [
    [{ PORT: 'http' }, 'PORT must be a whole number, got "http"'],
    [{ PORT: '-1' }, 'PORT must be a whole number, got "-1"'],
    [{ PORT: '80.5' }, 'PORT must be a whole number, got "80.5"'],
    [{ PORT: ' 80' }, 'PORT must be a whole number, got " 80"'],
    [{ PORT: '65536' }, 'PORT must be at most 65535 (got 65536)'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT must be at most 65535 (got 70000)'],
    [{ PUBLIC_URL: 'api.example.com/v1' }, `PUBLIC_URL ${V1_URL('api')} (got "api.example.com/v1")`],
    [{ PUBLIC_URL: 'ftp://api.example.com/v1' }, `PUBLIC_URL ${V1_URL('api')} (got "ftp://api.example.com/v1")`],
    [{ PUBLIC_URL: 'https://api.example.com' }, `PUBLIC_URL ${V1_URL('api')} (got "https://api.example.com")`],
    [{ PUBLIC_URL: 'https://api.example.com/v1?x=1' }, `PUBLIC_URL ${V1_URL('api')} (got "https://api.example.com/v1?x=1")`],
    [{ STAGING_URL: 'https://staging.example.com' }, `STAGING_URL ${V1_URL('staging')} (got "https://staging.example.com")`],
    [{ LOG_LEVEL: 'verbose' }, `LOG_LEVEL ${LOG_LEVELS} (got "verbose")`],
    [{ LOG_LEVEL: 'INFO' }, `LOG_LEVEL ${LOG_LEVELS} (got "INFO")`],
    [{ DEPRECATION_DATE: 'yesterday' }, 'DEPRECATION_DATE must be a date and time with a time zone, such as 2030-12-05T00:00:00Z (got "yesterday")'],
    [{ SUNSET_DATE: '2030-12-05' }, 'SUNSET_DATE must be a date and time with a time zone, such as 2030-12-05T00:00:00Z (got "2030-12-05")'],
    [{ SHUTDOWN_TIMEOUT_MS: '10s' }, 'SHUTDOWN_TIMEOUT_MS must be a whole number, got "10s"'],
    [{ DATABASE_POOL_MAX: '0' }, 'DATABASE_POOL_MAX must be at least 1 (got 0)'],
    [{ DATABASE_POOL_MAX: '1001' }, 'DATABASE_POOL_MAX must be at most 1000 (got 1001)'],
    [{ CONNECTIONS_CHECK_INTERVAL_MS: '9' }, 'CONNECTIONS_CHECK_INTERVAL_MS must be at least 10 (got 9)'],
    [{ REDIS_KEY_PREFIX: 'p'.repeat(101) }, `REDIS_KEY_PREFIX must be at most 100 characters long (got "${'p'.repeat(101)}")`],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '5s' }, 'DATABASE_STATEMENT_TIMEOUT_MS must be a whole number, got "5s"'],
    [{ KEY_CACHE_TTL_MS: '-1' }, 'KEY_CACHE_TTL_MS must be a whole number, got "-1"'],
    [{ ANSWER_CACHE_ENTRIES: 'many' }, 'ANSWER_CACHE_ENTRIES must be a whole number, got "many"'],
    [{ HOST: ' ' }, 'HOST must be a host name or address, without spaces (got " ")'],
    [{ METRICS_HOST: '0.0.0.0 ' }, 'METRICS_HOST must be a host name or address, without spaces (got "0.0.0.0 ")'],
    [{ FIRST_BYTE_TIMEOUT_MS: '6000' }, 'FIRST_BYTE_TIMEOUT_MS must not exceed HEADERS_TIMEOUT_MS (got 6000 and 5000)'],
    [{ TRUST_PROXY: 'true' }, TRUST_ANY],
    [{ TRUST_PROXY: 'TRUE' }, TRUST_ANY]
  ]
  for (const [env, message] of BAD) {
    const [[name, value]] = Object.entries(env) as [[string, string]]
    test(`${name}=${JSON.stringify(value)} stops with one line naming ${name}`, () => {
      assert.throws(() => loadConfig({ ...env }), (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.equal(error.message, message)
        assert.ok(error.message.startsWith(name) && !error.message.includes('\n'))
        return true
      })
    })
  }

  test('no refusal shows the schema: every setting with a pattern, a list or a format says in words what it takes', () => {
    const shaped = Object.entries(ConfigSchema.properties).filter(([, schema]) => 'pattern' in schema || 'enum' in schema || 'format' in schema)
    assert.deepEqual(shaped.map(([name]) => name), ['HOST', 'PUBLIC_URL', 'LOG_LEVEL', 'DEPRECATION_DATE', 'SUNSET_DATE', 'METRICS_HOST', 'STAGING_URL'])
    for (const [name] of shaped) {
      assert.throws(() => loadConfig({ [name]: 'not valid' }), (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, new RegExp(`^${name} must be [^^]+ \\(got "not valid"\\)$`))
        assert.doesNotMatch(error.message, /pattern|allowed values|expected form|format "/)
        return true
      })
    }
  })

  test('every variable docs/configuration.md documents is one loadConfig reads, and the other way round', async () => {
    const { readFile } = await import('node:fs/promises')
    const readme = await readFile(new URL('../docs/configuration.md', import.meta.url), 'utf8')
    const section = readme.slice(readme.indexOf('## Variables'), readme.indexOf('\n## ', readme.indexOf('## Variables') + 1))
    const documented = [...section.matchAll(/^\| `([A-Z_]+)` \| ([^|]*) \|/gm)].map(([, name, value]) => [name, value!.replaceAll('`', '').trim()])
    assert.deepEqual(documented.map(([name]) => name).toSorted(), [...Object.keys(DEFAULTS), ...OPTIONAL].toSorted())
    for (const [name, value] of documented) {
      if (!OPTIONAL.includes(name!)) assert.equal(value, String(DEFAULTS[name as keyof typeof DEFAULTS]), `${name}'s default in the README`)
    }
  })
})

/** A file of the test's own holding `content`; its path. */
function secretFile (t: TestContext, content: string): string {
  const path = join(tempDir(t), 'secret')
  writeFileSync(path, content, { mode: 0o600 })
  return path
}

const PASSWORD = 's3cret-Pa55'
const POSTGRES_URL = `postgres://petstore:${PASSWORD}@db.internal:5432/petstore`

/** Refuses env, and checks that the one-line message is `message` and never holds the password. */
function refuses (env: Record<string, string>, message: string) {
  assert.throws(() => loadConfig(env), (error: unknown) => {
    assert.ok(error instanceof ConfigError)
    assert.equal(error.message, message)
    assert.ok(!error.message.includes(PASSWORD) && !error.message.includes('\n'))
    return true
  })
}

describe('secrets from files (NAME_FILE)', () => {
  test('the settings that hold a password are the two URLs', () => {
    assert.deepEqual(SECRETS, ['DATABASE_URL', 'REDIS_URL'])
  })

  test('DATABASE_URL_FILE and REDIS_URL_FILE: the file\'s content is the value, less one line end (\\n or \\r\\n); nothing else is trimmed', (t) => {
    const env = { DATABASE_URL_FILE: secretFile(t, `${POSTGRES_URL}\n`), REDIS_URL_FILE: secretFile(t, `rediss://:${PASSWORD}@cache.internal:6380\r\n`) }
    assert.deepEqual(loadConfig(env), { ...DEFAULTS, DATABASE_URL: POSTGRES_URL, REDIS_URL: `rediss://:${PASSWORD}@cache.internal:6380` })
    assert.equal(loadConfig({ DATABASE_URL_FILE: secretFile(t, POSTGRES_URL) }).DATABASE_URL, POSTGRES_URL, 'no line end at all')
    assert.equal(loadConfig({ DATABASE_URL_FILE: secretFile(t, ` ${POSTGRES_URL} \n`) }).DATABASE_URL, ` ${POSTGRES_URL} `, 'spaces are kept')
  })

  test('an empty variable is unset, under either name', (t) => {
    assert.equal(loadConfig({ DATABASE_URL: '', DATABASE_URL_FILE: secretFile(t, POSTGRES_URL) }).DATABASE_URL, POSTGRES_URL)
    assert.equal(loadConfig({ DATABASE_URL: POSTGRES_URL, DATABASE_URL_FILE: '' }).DATABASE_URL, POSTGRES_URL)
  })

  test('both NAME and NAME_FILE set: refused, naming both, without the value', (t) => {
    refuses({ DATABASE_URL: POSTGRES_URL, DATABASE_URL_FILE: secretFile(t, POSTGRES_URL) }, 'DATABASE_URL and DATABASE_URL_FILE are both set: set only one of them')
    refuses({ REDIS_URL: `redis://:${PASSWORD}@cache`, REDIS_URL_FILE: '/run/secrets/redis-url' }, 'REDIS_URL and REDIS_URL_FILE are both set: set only one of them')
  })

  test('a file that cannot be read, is empty or holds several lines: refused, naming the variable, the file and why, never its content', (t) => {
    const dir = tempDir(t)
    refuses({ DATABASE_URL_FILE: join(dir, 'missing') }, `DATABASE_URL_FILE names a file that cannot be read: ${join(dir, 'missing')} (no such file)`)
    refuses({ REDIS_URL_FILE: dir }, `REDIS_URL_FILE names a file that cannot be read: ${dir} (it is a folder)`)
    const empty = secretFile(t, '\n')
    refuses({ DATABASE_URL_FILE: empty }, `DATABASE_URL_FILE names an empty file: ${empty}`)
    const twoLines = secretFile(t, `${POSTGRES_URL}\n\n`)
    refuses({ DATABASE_URL_FILE: twoLines }, `DATABASE_URL_FILE names a file of more than one line: ${twoLines}`)
    const underAFile = join(twoLines, 'url')
    refuses({ DATABASE_URL_FILE: underAFile }, `DATABASE_URL_FILE names a file that cannot be read: ${underAFile} (a part of the path is not a folder)`)
  })

  test('the server stops at start with one line and exit 1 when both are set', async (t) => {
    const run = await runToExit(['src/server.ts'], { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}`, DATABASE_URL_FILE: secretFile(t, 'sqlite::memory:'), PORT: '0', METRICS_PORT: '0' })
    assert.deepEqual(run, { code: 1, stdout: '', stderr: 'petstore: cannot start: DATABASE_URL and DATABASE_URL_FILE are both set: set only one of them\n' })
  })

  test('the CLI and the server read DATABASE_URL_FILE: a key made by the CLI opens the server\'s pets', async (t) => {
    const env = { DATABASE_URL: '', DATABASE_URL_FILE: secretFile(t, `sqlite:${join(tempDir(t), 'petstore.db')}\n`) }
    const created = await runCli(['keys', 'create', '--name', 'from-file', '--json'], env)
    assert.equal(created.code, 0, created.stderr)
    const { key } = JSON.parse(created.stdout) as { key: string }
    const listed = await runCli(['keys', 'list', '--json'], env)
    assert.equal(listed.code, 0, listed.stderr)
    assert.deepEqual((JSON.parse(listed.stdout) as Array<{ name: string }>).map(({ name }) => name), ['from-file'])
    const server = await startServer(t, env)
    const pets = await fetch(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
    assert.deepEqual({ status: pets.status, body: await pets.json() }, { status: 200, body: [] })
  })

  test('the CLI refuses both set with its one line and exit 1', async (t) => {
    const run = await runCli(['keys', 'list'], { DATABASE_URL: 'sqlite::memory:', DATABASE_URL_FILE: secretFile(t, 'sqlite::memory:') })
    assert.deepEqual(run, { code: 1, stdout: '', stderr: 'petstore keys list: DATABASE_URL and DATABASE_URL_FILE are both set: set only one of them\n' })
  })
})
