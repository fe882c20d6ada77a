import pg from 'pg'
import { TlsAnswers, tlsIfOfferedClass } from './tls.ts'
import type { PostgresTarget, SessionAttrs } from './url.ts'

/**
 * A host that responded but does not take writes (a standby, or a primary turned read-only or
 * demoted): its connection is closed and the next host is tried. An outage (see isOutage).
 */
export class NotPrimaryError extends Error {
  override readonly name = 'NotPrimaryError'
}

// libpq's own checks for the two values: SHOW transaction_read_only for read-write, and
// pg_is_in_recovery() for primary. One round trip, once per new connection.
const CHECKS: Record<SessionAttrs, { text: string, refusal: string }> = {
  'read-write': { text: "SELECT current_setting('transaction_read_only') = 'on' AS refused", refusal: 'does not take writes (transaction_read_only is on)' },
  primary: { text: 'SELECT pg_is_in_recovery() AS refused', refusal: 'is a standby (in recovery)' }
}

/**
 * Which host of a list a new connection goes to: the last one found to take writes, so that a
 * host known to be down or a standby costs one failed attempt, not one per connection. Moved
 * on to the next host (in the order of the URL, wrapping) when the host in use refuses.
 */
class HostSelector {
  current = 0
  readonly #count: number

  constructor (count: number) {
    this.#count = count
  }

  /** The host at index failed: the next connection tries the one after it, unless another attempt already moved on. */
  leave (index: number): void {
    if (this.current === index) this.current = (index + 1) % this.#count
  }
}

// One per host list in the process: pools, the migration connection and the first-key lock
// of one DATABASE_URL share what they learnt about which host takes writes.
const selectors = new Map<string, HostSelector>()

function selectorOf (target: PostgresTarget): HostSelector {
  const key = target.hosts.map((host) => host.connectionString).join('\n')
  let selector = selectors.get(key)
  if (!selector) selectors.set(key, (selector = new HostSelector(target.hosts.length)))
  return selector
}

function ignore (): void {}

type ConnectCallback = ((err: Error) => void) | ((err: null, client: pg.Client) => void)

/**
 * The client class for a target. Without target_session_attrs, pg.Client itself (with
 * sslmode=prefer, a TlsIfOfferedClient on the replies of tls): one host, nothing checked, nothing added. With it, a
 * client of that class whose connect() goes to the host the selector names, asks it libpq's
 * question, and keeps the connection only when the host passes; otherwise (or when it cannot connect) the selector moves on and connect() fails, so
 * the caller's next attempt tries the next host. A pg.Client connects once, so trying the
 * hosts in turn is the caller's loop (Connections, connectClient), over at most hosts.length
 * attempts: the check happens once per connection, never per statement.
 */
export function clientClassOf (target: PostgresTarget, tls = new TlsAnswers()): typeof pg.Client {
  const Base = target.tlsOptional ? tlsIfOfferedClass(tls) : pg.Client
  const attrs = target.sessionAttrs
  if (attrs === undefined) return Base
  const check = CHECKS[attrs]
  const selector = selectorOf(target)

  return class PrimaryClient extends Base {
    readonly #host: number

    constructor (config?: pg.ClientConfig) {
      super({ ...config, connectionString: target.hosts[selector.current]!.connectionString })
      this.#host = selector.current
      // An error while the host is checked fails connect(); the pool listens only afterwards.
      this.on('error', ignore)
    }

    override connect (): Promise<pg.Client>
    override connect (callback: ConnectCallback): void
    override connect (callback?: ConnectCallback): Promise<pg.Client> | void {
      const connected = this.#connectChecked()
      if (!callback) return connected
      const done = callback as (err: Error | null, client?: pg.Client) => void
      connected.then((client) => done(null, client), done)
    }

    async #connectChecked (): Promise<pg.Client> {
      const host = target.hosts[this.#host]!
      try {
        await super.connect()
        const { rows } = await super.query<{ refused: boolean }>(check.text)
        if (rows[0]?.refused !== false) throw new NotPrimaryError(`${host.name} ${check.refusal}`)
        return this
      } catch (error) {
        selector.leave(this.#host)
        // Not awaited: closing needs no response, and a silent host would never give one.
        this.end().catch(ignore)
        throw error
      }
    }
  }
}

/**
 * With sslmode=prefer, asks the host the next connection goes to whether it offers TLS, unless
 * tls knows already (undefined then): that connection is made after the reply, with TLS or
 * without. A host that cannot be asked fails as a connection to it would, and the selection
 * moves on to the next host.
 */
export function askTlsOfNextHost (target: PostgresTarget, tls: TlsAnswers, timeoutMs: number): Promise<void> | undefined {
  if (!target.tlsOptional) return undefined
  const selector = target.sessionAttrs === undefined ? undefined : selectorOf(target)
  const index = selector?.current ?? 0
  const asking = tls.ask(target.hosts[index]!.connectionString, timeoutMs)
  return selector && asking
    ? asking.catch((error: unknown) => {
      selector.leave(index)
      throw error
    })
    : asking
}
