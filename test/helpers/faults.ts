import type { Store } from '../../src/store/types.ts'

/** Test-only fault injection, handed to buildApp: never reachable from configuration. */
export interface Faults {
  /** Runs before every store call; throwing makes the call fail, awaiting delays it. */
  beforeStoreCall?(operation: string): void | Promise<void>
}

// Called on every request and expected to return at once, only registering a listener, or read
// as /metrics is served (pools); never a point of failure.
const SYNCHRONOUS = new Set<string | symbol>(['keyVersion', 'watchWrites', 'pools'])

export function withFaults (store: Store, faults: Faults): Store {
  const before = faults.beforeStoreCall
  if (!before) return store
  return new Proxy(store, {
    get (target, property) {
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      if (SYNCHRONOUS.has(property)) return (value as () => unknown).bind(target)
      return async (...args: unknown[]) => {
        await before(String(property))
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    }
  })
}
