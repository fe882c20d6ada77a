import type { Store } from './types.ts'

/** Where call durations go: the store duration histogram (ops/series-metrics.ts StoreDurations). */
export interface CallDurations {
  record(operation: string, outcome: 'ok' | 'error', seconds: number): void
}

type Method = (...args: unknown[]) => unknown

/**
 * Runs one store call inside a span of its own and gives back what the call returns, a value or
 * a promise, as it is (src/ops/tracing.ts). The call comes as method, receiver and arguments
 * rather than a closure, so that a traced call allocates none. Only when tracing is on.
 */
export type StoreSpan = (operation: string, method: Method, store: object, args: unknown[]) => unknown

/**
 * Passed through untimed: closing and registering a listener are not queries, and the pool
 * figures are read when /metrics is served, not by requests.
 */
const UNTIMED = new Set(['close', 'watchWrites', 'pools'])

/**
 * The same store, with every method call timed into `durations` by outcome, and run in a span
 * of its own when tracing is on. The methods are found on the store itself (its own properties
 * and its class's), so a method added to the Store interface is timed with no change here.
 * A method that returns a promise is timed when the promise settles; one that returns a value
 * (SQLite's getPet, keyVersion) is timed at once and still returns the value, not a promise.
 * Fields (kind, idsFollowCommitOrder) are copied. The object is built once: a call allocates no
 * closure.
 */
export function timedStore (store: Store, durations: CallDurations, span?: StoreSpan): Store {
  const timed: Record<string, unknown> = {}
  const source = store as unknown as Record<string, unknown>
  for (const name of propertyNames(store)) {
    const value = source[name]
    if (typeof value !== 'function') timed[name] = value
    else if (UNTIMED.has(name)) timed[name] = value.bind(store)
    else timed[name] = timedMethod(store, value as Method, name, durations, span)
  }
  return timed as unknown as Store
}

/** Own property names and those of every prototype up to Object's, the nearest first. */
function propertyNames (store: object): Set<string> {
  const names = new Set<string>()
  for (let object: object | null = store; object !== null && object !== Object.prototype; object = Object.getPrototypeOf(object)) {
    for (const name of Object.getOwnPropertyNames(object)) if (name !== 'constructor') names.add(name)
  }
  return names
}

function timedMethod (store: object, method: Method, operation: string, durations: CallDurations, span: StoreSpan | undefined): Method {
  return (...args) => {
    const started = performance.now()
    let result: unknown
    try {
      result = span === undefined ? method.apply(store, args) : span(operation, method, store, args)
    } catch (error) {
      durations.record(operation, 'error', secondsSince(started))
      throw error
    }
    if (result instanceof Promise) return timeSettlement(result, operation, durations, started)
    durations.record(operation, 'ok', secondsSince(started))
    return result
  }
}

async function timeSettlement (call: Promise<unknown>, operation: string, durations: CallDurations, started: number): Promise<unknown> {
  try {
    const result = await call
    durations.record(operation, 'ok', secondsSince(started))
    return result
  } catch (error) {
    durations.record(operation, 'error', secondsSince(started))
    throw error
  }
}

function secondsSince (started: number): number {
  return (performance.now() - started) / 1000
}
