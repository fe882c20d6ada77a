import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { parseDocument } from 'yaml'
import { HAPROXY_CFG } from './haproxy.ts'

/** compose.yaml as compose reads it, for the stack test to check it and to run what it describes. */

export interface ComposeService {
  image?: string
  build?: string
  entrypoint?: string[]
  command?: string[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }> | string[]
  ports?: string[]
  volumes?: string[]
  stop_grace_period?: string
}

export function readCompose (): Record<string, ComposeService> {
  const document = parseDocument(readFileSync(new URL('../compose.yaml', import.meta.url), 'utf8'))
  assert.deepEqual([...document.errors, ...document.warnings].map(String), [])
  const compose: { services: Record<string, ComposeService> } = document.toJS()
  return compose.services
}

/** An instance's environment as compose gives it: ${VAR:-default} becomes the default. */
export function instanceEnvironment (service: ComposeService): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([name, value]) => [name, value.replace(/\$\{\w+:-([^}]*)\}/g, '$1')]))
}

/** haproxy's `default-server check inter N fall M`: how long until a failing instance is out. */
export function haproxyTakesOutMs (): number {
  const line = /^\s*default-server\b.*$/m.exec(readFileSync(new URL(`../${HAPROXY_CFG}`, import.meta.url), 'utf8'))?.[0] ?? ''
  const inter = Number(/\binter (\d+)\b/.exec(line)?.[1])
  const fall = Number(/\bfall (\d+)\b/.exec(line)?.[1])
  assert.ok(inter > 0 && fall > 0, `no inter and fall in: ${line}`)
  return inter * fall
}
