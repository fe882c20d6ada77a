import type { NewPet, Pet } from '../contract/schemas.ts'
import type { ApiKeyRecord, IdempotencyClaim, IdempotentCreate, KeyAudit, KeyEvent, KeyEventFilter, KeyRevocation, KeyRotation, ListPetsOptions, NewApiKey, Store } from '../store/types.ts'
import type { WriteStateListener } from '../store/write-health.ts'
import type { StoreDurations } from './series-metrics.ts'

/** The store calls that are timed: all but its fixed fields, close() and the pool figures /metrics reads. */
type Operation = Exclude<keyof Store, 'kind' | 'idsFollowCommitOrder' | 'close' | 'watchWrites' | 'pools'>

/**
 * Runs one store call inside a span of its own and gives back its answer as it is, a value or a
 * promise (src/ops/tracing.ts). Only when tracing is on: otherwise the calls run as they are.
 */
export type StoreSpan = <T>(operation: string, call: () => T) => T

/** The timing of one operation's calls. */
class Timer {
  readonly #durations: StoreDurations
  readonly #operation: Operation
  readonly #span: StoreSpan | undefined

  constructor (durations: StoreDurations, operation: Operation, span: StoreSpan | undefined) {
    this.#durations = durations
    this.#operation = operation
    this.#span = span
  }

  /** The call, in a span of its own when tracing is on. */
  run<T> (call: () => T): T {
    return this.#span === undefined ? call() : this.#span(this.#operation, call)
  }

  ok (started: number): void { this.#durations.record(this.#operation, 'ok', (performance.now() - started) / 1000) }
  error (started: number): void { this.#durations.record(this.#operation, 'error', (performance.now() - started) / 1000) }

  async time<T> (call: () => Promise<T>): Promise<T> {
    const started = performance.now()
    try {
      const result = await this.run(call)
      this.ok(started)
      return result
    } catch (error) {
      this.error(started)
      throw error
    }
  }
}

/**
 * The same store, with every call timed into the store duration histogram by outcome, and run
 * in a span of its own when tracing is on. One method per Store method, so that a new one is a
 * type error here until it is timed too.
 */
export class TimedStore implements Store {
  readonly kind: Store['kind']
  readonly idsFollowCommitOrder: boolean
  /** Present when the store has it: without it, key caches fall back to a time bound. */
  readonly keyVersion?: () => number
  readonly #store: Store
  readonly #timers: Record<Operation, Timer>
  readonly #traced: boolean

  constructor (store: Store, durations: StoreDurations, span?: StoreSpan) {
    this.#store = store
    this.kind = store.kind
    this.idsFollowCommitOrder = store.idsFollowCommitOrder
    this.#traced = span !== undefined
    const timer = (operation: Operation) => new Timer(durations, operation, span)
    this.#timers = {
      migrate: timer('migrate'),
      checkReady: timer('checkReady'),
      createPet: timer('createPet'),
      createPetIdempotently: timer('createPetIdempotently'),
      deleteExpiredIdempotencyRecords: timer('deleteExpiredIdempotencyRecords'),
      getPet: timer('getPet'),
      listPets: timer('listPets'),
      countPets: timer('countPets'),
      createApiKey: timer('createApiKey'),
      findApiKeyByHash: timer('findApiKeyByHash'),
      listApiKeys: timer('listApiKeys'),
      listKeyEvents: timer('listKeyEvents'),
      revokeApiKey: timer('revokeApiKey'),
      touchApiKey: timer('touchApiKey'),
      countApiKeys: timer('countApiKeys'),
      insertPets: timer('insertPets'),
      rotateApiKey: timer('rotateApiKey'),
      keyVersion: timer('keyVersion')
    }
    const keyVersion = store.keyVersion
    if (keyVersion !== undefined) {
      const versions = this.#timers.keyVersion
      // Synchronous, as the key cache reads it on the request path and expects it at once.
      const traced = this.#traced
      this.keyVersion = () => {
        const started = performance.now()
        let version: number
        try {
          version = traced ? versions.run(() => keyVersion.call(store)) : keyVersion.call(store)
        } catch (error) {
          versions.error(started)
          throw error
        }
        versions.ok(started)
        return version
      }
    }
  }

  migrate (): Promise<string[]> { return this.#timers.migrate.time(() => this.#store.migrate()) }
  checkReady (): Promise<void> { return this.#timers.checkReady.time(() => this.#store.checkReady()) }
  createPet (pet: NewPet): Promise<Pet> { return this.#timers.createPet.time(() => this.#store.createPet(pet)) }

  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    return this.#timers.createPetIdempotently.time(() => this.#store.createPetIdempotently(pet, claim))
  }

  deleteExpiredIdempotencyRecords (now: string, limit: number): Promise<number> {
    return this.#timers.deleteExpiredIdempotencyRecords.time(() => this.#store.deleteExpiredIdempotencyRecords(now, limit))
  }

  /** A store that reads in this thread answers at once (see Store.getPet), and stays so here. */
  getPet (id: bigint): Pet | undefined | Promise<Pet | undefined> {
    const timer = this.#timers.getPet
    const started = performance.now()
    let found: Pet | undefined | Promise<Pet | undefined>
    try {
      // No closure per call without tracing: this is the cheapest read the service makes.
      found = this.#traced ? timer.run(() => this.#store.getPet(id)) : this.#store.getPet(id)
    } catch (error) {
      timer.error(started)
      throw error
    }
    if (found instanceof Promise) {
      return found.then(
        (pet) => { timer.ok(started); return pet },
        (error: unknown) => { timer.error(started); throw error }
      )
    }
    timer.ok(started)
    return found
  }

  listPets (options: ListPetsOptions): Promise<Pet[]> { return this.#timers.listPets.time(() => this.#store.listPets(options)) }
  countPets (): Promise<number> { return this.#timers.countPets.time(() => this.#store.countPets()) }
  createApiKey (key: NewApiKey, audit: KeyAudit): Promise<ApiKeyRecord> { return this.#timers.createApiKey.time(() => this.#store.createApiKey(key, audit)) }
  listKeyEvents (filter: KeyEventFilter): Promise<KeyEvent[]> { return this.#timers.listKeyEvents.time(() => this.#store.listKeyEvents(filter)) }

  findApiKeyByHash (hash: string): Promise<ApiKeyRecord | undefined> {
    return this.#timers.findApiKeyByHash.time(() => this.#store.findApiKeyByHash(hash))
  }

  listApiKeys (): Promise<ApiKeyRecord[]> { return this.#timers.listApiKeys.time(() => this.#store.listApiKeys()) }
  revokeApiKey (id: number, audit: KeyAudit): Promise<KeyRevocation> { return this.#timers.revokeApiKey.time(() => this.#store.revokeApiKey(id, audit)) }
  touchApiKey (id: number, at: string): Promise<void> { return this.#timers.touchApiKey.time(() => this.#store.touchApiKey(id, at)) }
  countApiKeys (): Promise<number> { return this.#timers.countApiKeys.time(() => this.#store.countApiKeys()) }
  insertPets (pets: NewPet[]): Promise<number> { return this.#timers.insertPets.time(() => this.#store.insertPets(pets)) }

  rotateApiKey (oldId: number, newKey: Omit<NewApiKey, 'scope'>, oldExpiresAt: string, now: string, audit: KeyAudit): Promise<KeyRotation> {
    return this.#timers.rotateApiKey.time(() => this.#store.rotateApiKey(oldId, newKey, oldExpiresAt, now, audit))
  }

  /** Not timed: closing is not a query. */
  close (): Promise<void> { return this.#store.close() }
  /** Not timed: it only registers a listener. */
  watchWrites (listener: WriteStateListener): void { this.#store.watchWrites(listener) }
}
