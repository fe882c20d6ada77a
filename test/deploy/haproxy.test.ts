import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort, HAPROXY, HAPROXY_CFG, haproxyMissing, unavailable } from '../helpers/haproxy.ts'
import { stopProcess } from '../helpers/processes.ts'

/**
 * deploy/haproxy/haproxy.cfg's operator parts: haproxy's Prometheus exporter on the internal
 * stats port and not on the clients' one, and the commented TLS bind, which once uncommented
 * serves HTTPS with Strict-Transport-Security while plain HTTP never gets that header.
 */

const ROOT = new URL('../..', import.meta.url).pathname
const TLS_BIND = /^(\s*)# {3}bind :443 ssl crt (\S+) alpn h2,http\/1\.1$/m

interface Running { api: number, stats: number }

/** haproxy in the foreground on `cfg`, its instances two ports where nothing listens; stopped when the test ends. */
async function runHaproxy (t: TestContext, cfg: string): Promise<Running> {
  const ports = { api: await freePort(), stats: await freePort() }
  const child = spawn(HAPROXY, ['-db', '-f', cfg], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PETSTORE_BIND: `127.0.0.1:${ports.api}`, PETSTORE_STATS_BIND: `127.0.0.1:${ports.stats}`, PETSTORE_1: '127.0.0.1:9', PETSTORE_2: '127.0.0.1:9' },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let log = ''
  child.stderr!.on('data', (chunk: Buffer) => { log += chunk.toString() })
  t.after(() => stopProcess(child))
  for (let tries = 0; ; tries++) {
    if (await fetch(`http://127.0.0.1:${ports.stats}/;csv`).then((reply) => reply.ok, () => false)) return ports
    assert.ok(tries < 200 && child.exitCode === null, `haproxy did not start:\n${log}`)
    await sleep(50)
  }
}

test('haproxy.cfg passes haproxy -c, its only warnings the compose names it cannot resolve here', (t) => {
  if (unavailable(t, 'haproxy', haproxyMissing())) return
  const checked = spawnSync(HAPROXY, ['-c', '-f', HAPROXY_CFG], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })
  const warnings = `${checked.stdout}${checked.stderr}`.split('\n').filter((line) => line.includes('[WARNING]') || line.includes('[ALERT]'))
  assert.equal(checked.status, 0, checked.stderr)
  assert.deepEqual(warnings.map((line) => line.replace(/^.*?: config : \[[^\]]+\] : /, '')), [
    '\'server petstore/petstore-1\' : could not resolve address \'petstore-1\', disabling server.',
    '\'server petstore/petstore-2\' : could not resolve address \'petstore-2\', disabling server.'
  ])
})

test('haproxy\'s Prometheus exporter answers /metrics on the stats port; on the clients\' port /metrics goes to the instances like any path', async (t) => {
  if (unavailable(t, 'haproxy', haproxyMissing())) return
  const ports = await runHaproxy(t, HAPROXY_CFG)
  const metrics = await fetch(`http://127.0.0.1:${ports.stats}/metrics`)
  assert.equal(metrics.status, 200)
  const text = await metrics.text()
  // A series per server and state, whichever state the first checks have reached.
  const series = (name: string) => text.split('\n').filter((line) => line.startsWith(`${name}{`)).map((line) => line.replace(/ \d+$/, ''))
  assert.deepEqual(series('haproxy_server_status').filter((line) => /state="(UP|DOWN)"/.test(line)), [
    'haproxy_server_status{proxy="petstore",server="petstore-1",state="DOWN"}',
    'haproxy_server_status{proxy="petstore",server="petstore-1",state="UP"}',
    'haproxy_server_status{proxy="petstore",server="petstore-2",state="DOWN"}',
    'haproxy_server_status{proxy="petstore",server="petstore-2",state="UP"}'
  ])
  assert.deepEqual(series('haproxy_frontend_http_requests_total'), ['haproxy_frontend_http_requests_total{proxy="api"}', 'haproxy_frontend_http_requests_total{proxy="stats"}'])
  // The instances are down here, so the clients' /metrics gets haproxy's 503, never the exporter.
  const outside = await fetch(`http://127.0.0.1:${ports.api}/metrics`)
  assert.deepEqual({ status: outside.status, exporter: (await outside.text()).includes('haproxy_') }, { status: 503, exporter: false })
  assert.equal(outside.headers.get('strict-transport-security'), null, 'no HSTS on plain HTTP')
})

test('the commented TLS bind, uncommented with a certificate, serves HTTPS with Strict-Transport-Security', async (t) => {
  if (unavailable(t, 'haproxy', haproxyMissing())) return
  if (unavailable(t, 'openssl', spawnSync('sh', ['-c', 'command -v openssl']).status === 0 ? undefined : 'openssl is missing: apt-get install -y openssl')) return
  const folder = mkdtempSync(join(tmpdir(), 'petstore-haproxy-tls-'))
  t.after(() => rmSync(folder, { recursive: true, force: true }))
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-keyout', join(folder, 'key.pem'), '-out', join(folder, 'cert.pem')], { encoding: 'utf8' })
  assert.equal(made.status, 0, made.stderr)
  writeFileSync(join(folder, 'localhost.pem'), readFileSync(join(folder, 'cert.pem'), 'utf8') + readFileSync(join(folder, 'key.pem'), 'utf8'))
  const shipped = readFileSync(join(ROOT, HAPROXY_CFG), 'utf8')
  assert.match(shipped, TLS_BIND, 'haproxy.cfg shows the TLS bind, commented')
  // The example's bind, uncommented, in place of the plain one, on a free port and this certificate.
  const tlsPort = await freePort()
  const cfg = join(folder, 'haproxy.cfg')
  writeFileSync(cfg, shipped.replace(/^\s*bind "\$\{PETSTORE_BIND-:8080\}"$/m, '').replace(TLS_BIND, `$1bind 127.0.0.1:${tlsPort} ssl crt ${folder}/localhost.pem alpn h2,http/1.1`))
  await runHaproxy(t, cfg)
  const reply = await new Promise<{ status: number | undefined, hsts: string | string[] | undefined }>((resolve, reject) => {
    request({ host: '127.0.0.1', port: tlsPort, path: '/v1/pets', rejectUnauthorized: false }, (response) => {
      response.resume()
      resolve({ status: response.statusCode, hsts: response.headers['strict-transport-security'] })
    }).on('error', reject).end()
  })
  assert.deepEqual(reply, { status: 503, hsts: 'max-age=63072000' })
})
