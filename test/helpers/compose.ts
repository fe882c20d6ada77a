import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { parseDocument } from 'yaml'
import { HAPROXY_CFG } from './haproxy.ts'

/** compose.yaml as compose reads it, for the stack test to check it and to run what it describes. */

export interface ComposeService {
  image?: string
  build?: string | { context: string, target?: string }
  profiles?: string[]
  secrets?: string[]
  mem_limit?: string
  cpus?: number
  entrypoint?: string[]
  command?: string[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }> | string[]
  ports?: string[]
  volumes?: string[]
  stop_grace_period?: string
  healthcheck?: { test: string[], interval?: string, timeout?: string, start_period?: string, retries?: number }
  networks?: Record<string, { ipv4_address?: string } | null>
}

export interface Compose {
  services: Record<string, ComposeService>
  secrets?: Record<string, { file: string }>
  networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string, ip_range?: string }> } } | null>
}

export const readComposeFile = () => readFileSync(new URL('../../compose.yaml', import.meta.url), 'utf8')

export function readComposeDocument (): Compose {
  const document = parseDocument(readComposeFile())
  assert.deepEqual([...document.errors, ...document.warnings].map(String), [])
  return document.toJS()
}

export function readCompose (): Record<string, ComposeService> {
  return readComposeDocument().services
}

/**
 * A value as compose interpolates it from `variables`: ${VAR}, ${VAR:-default} (the default
 * when VAR is unset or empty), ${VAR:?message} (an error naming the message when it is), $$.
 */
export function interpolate (value: string, variables: Record<string, string | undefined> = {}): string {
  return value.replace(/\$\$|\$\{(\w+)(?:(:-|:\?)([^}]*))?\}/g, (whole, name: string | undefined, operator: string | undefined, argument: string | undefined) => {
    if (name === undefined) return '$'
    const set = variables[name]
    if (set !== undefined && set !== '') return set
    if (operator === ':-') return argument ?? ''
    if (operator === ':?') throw new Error(`required variable ${name} is missing a value: ${argument}`)
    return ''
  })
}

/** An instance's environment as compose gives it, from `variables` (by default none: every ${VAR:-default} becomes its default). */
export function instanceEnvironment (service: ComposeService, variables: Record<string, string | undefined> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([name, value]) => [name, interpolate(String(value), variables)]))
}

const haproxyCfg = () => readFileSync(new URL(`../../${HAPROXY_CFG}`, import.meta.url), 'utf8')

/** A number from haproxy's `default-server` line, such as inter, fall or maxconn. */
export function haproxyServerSetting (name: string): number {
  const line = /^\s*default-server\b.*$/m.exec(haproxyCfg())?.[0] ?? ''
  const value = Number(new RegExp(`\\b${name} (\\d+)\\b`).exec(line)?.[1])
  assert.ok(value > 0, `no ${name} in: ${line}`)
  return value
}

/** haproxy's `default-server check inter N fall M`: how long until a failing instance is out. */
export function haproxyTakesOutMs (): number {
  return haproxyServerSetting('inter') * haproxyServerSetting('fall')
}

/** The most connections one client address may hold at once, at any load: `reject if { sc0_conn_cur gt N }`. */
export function haproxyConnectionsPerAddress (): number {
  const cap = Number(/^\s*tcp-request connection reject if \{ sc0_conn_cur gt (\d+) \}/m.exec(haproxyCfg())?.[1])
  assert.ok(cap > 0, `no per-address connection cap in ${HAPROXY_CFG}`)
  return cap
}

/** An environment less the variables that name a compose secret (/run/secrets/…), for a process that gets its settings another way. */
export function withoutSecrets (environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).filter(([, value]) => !value.startsWith('/run/secrets/')))
}
