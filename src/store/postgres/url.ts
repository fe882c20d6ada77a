import { redactUrl, StoreUrlError } from '../store-errors.ts'

/** What a new connection must find before it is kept (libpq's target_session_attrs). */
export type SessionAttrs = 'read-write' | 'primary'

export interface PostgresHost {
  /** The URL handed to pg for this host: the DATABASE_URL with this host alone, without the service's own parameters. */
  connectionString: string
  /** host:port, for messages. */
  name: string
}

export interface PostgresTarget {
  /** The URL handed to pg, without the service's own parameters: the first host's. */
  connectionString: string
  /** Every host of the URL, in the order written; one for a plain URL. */
  hosts: PostgresHost[]
  /** From `?target_session_attrs=`: each new connection is checked and kept only on a host that passes. */
  sessionAttrs?: SessionAttrs
  /** From `?schema=NAME`: the schema all tables live in, created by migrate. */
  schema?: string
  /** From `?sslmode=prefer`: TLS when the server offers it, plain text when it has none (see TlsIfOfferedClient). */
  tlsOptional?: true
  /** host:port[,host:port…]/database, for messages. */
  where: string
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/
const SESSION_ATTRS = new Set<string>(['read-write', 'primary'])
// libpq's other values: valid there, but they let a connection land where writes fail.
const READ_SESSION_ATTRS = new Set(['any', 'read-only', 'standby', 'prefer-standby'])
// libpq's sslmode values, and pg's own no-verify (TLS, the certificate not checked). libpq's
// allow (plain text first, TLS only when the server insists) is refused with what to write.
const SSL_MODES = new Set(['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'])
// Without uselibpqcompat=true, pg reads these three as verify-full (certificate and host name
// checked); with it, as libpq does: prefer and require use TLS without checking the
// certificate, unless sslrootcert names a CA (require then checks it, as verify-ca does).
const LIBPQ_SSL_MODES = new Set(['prefer', 'require', 'verify-ca'])

function invalid (url: string, why = ''): StoreUrlError {
  return new StoreUrlError(`DATABASE_URL is not a valid postgres:// URL${why}: ${JSON.stringify(redactUrl(url))}`)
}

/**
 * Reads a postgres:// or postgresql:// URL, also libpq's multi-host form
 * `postgres://user@host1:5432,host2:5432/db?target_session_attrs=read-write`. WHATWG URL takes
 * one host only, so the host list is split here and each host's URL is checked by URL itself:
 * user, password, port, brackets around IPv6 and percent-encoding mean what they mean for one
 * host. `?schema=NAME` selects a schema (lower-case identifier). `?sslmode=` means what it
 * means to libpq (`pg_autoctl show uri` prints sslmode=prefer), or start-up stops.
 */
export function parsePostgresUrl (url: string): PostgresTarget {
  const parts = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/is.exec(url)
  if (!parts) throw invalid(url)
  const [, scheme, authority, rest] = parts as unknown as [string, string, string, string]
  const at = authority.lastIndexOf('@')
  const userinfo = authority.slice(0, at + 1)
  const hostList = authority.slice(at + 1).split(',')
  if (hostList.length > 1 && hostList.some((host) => host === '')) throw invalid(url, ' (an empty host in its host list)')

  const urls = hostList.map((host) => {
    try {
      return new URL(`${scheme}${userinfo}${host}${rest}`)
    } catch {
      throw invalid(url, hostList.length > 1 ? ` (at host ${JSON.stringify(host)})` : '')
    }
  })
  const first = urls[0]!
  const schema = first.searchParams.get('schema') ?? undefined
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new StoreUrlError(`DATABASE_URL schema must be a lower-case identifier (a-z, 0-9, _), got ${JSON.stringify(schema)}`)
  }
  const attrs = first.searchParams.get('target_session_attrs') ?? undefined
  if (attrs !== undefined && !SESSION_ATTRS.has(attrs)) {
    throw new StoreUrlError(READ_SESSION_ATTRS.has(attrs)
      ? `DATABASE_URL target_session_attrs=${attrs} is not supported: the service writes, so it needs read-write or primary`
      : `DATABASE_URL target_session_attrs must be read-write or primary, got ${JSON.stringify(attrs)}`)
  }
  const sslmode = first.searchParams.get('sslmode') ?? undefined
  if (sslmode === 'allow') {
    throw new StoreUrlError('DATABASE_URL sslmode=allow is not supported: write sslmode=prefer (TLS when the server offers it) or sslmode=disable')
  }
  if (sslmode !== undefined && !SSL_MODES.has(sslmode)) {
    throw new StoreUrlError(`DATABASE_URL sslmode must be disable, prefer, require, verify-ca, verify-full or no-verify, got ${JSON.stringify(sslmode)}`)
  }
  if (sslmode === 'verify-ca' && !first.searchParams.get('sslrootcert')) {
    throw new StoreUrlError('DATABASE_URL sslmode=verify-ca needs sslrootcert=FILE, the certificate of the CA that signed the server\'s')
  }
  if (urls.length > 1 && attrs === undefined) {
    throw new StoreUrlError(`DATABASE_URL names ${urls.length} hosts: add target_session_attrs=read-write (or primary), so that only the host that takes writes is used`)
  }

  const hosts = urls.map((parsed) => {
    parsed.searchParams.delete('schema')
    parsed.searchParams.delete('target_session_attrs')
    if (sslmode !== undefined && LIBPQ_SSL_MODES.has(sslmode)) parsed.searchParams.set('uselibpqcompat', 'true')
    return { connectionString: parsed.toString(), name: `${decodeURIComponent(parsed.hostname) || 'localhost'}:${parsed.port || '5432'}` }
  })
  const database = decodeURIComponent(first.pathname.slice(1)) || decodeURIComponent(first.username) || 'postgres'
  return {
    connectionString: hosts[0]!.connectionString,
    hosts,
    ...(attrs !== undefined && { sessionAttrs: attrs as SessionAttrs }),
    schema,
    ...(sslmode === 'prefer' && { tlsOptional: true as const }),
    where: `${hosts.map((host) => host.name).join(',')}/${database}${schema ? `?schema=${schema}` : ''}`
  }
}
