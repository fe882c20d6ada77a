import type { components } from './generated/openapi.ts'
import { parseJson, toInt64, type Int64Input, type Int64Mode } from './json.ts'
import { nextLink } from './link.ts'
import { metaOf, type ResponseMeta } from './meta.ts'
import { createReplyCache, type CacheOptions } from './reply-cache.ts'
import { createRevalidatingRead } from './revalidate.ts'
import type { RetryOptions } from './retry.ts'
import { createTransport, type ReceivedResponse } from './transport.ts'
import { randomUuid } from './uuid.ts'

type Schemas = components['schemas']
type Int64Of<I extends Int64Mode> = I extends 'string' ? string : bigint

export type PetStatus = Schemas['PetStatus']
/** A pet as the service returns it: `id` and `categoryId` are bigint, or decimal strings with `int64: 'string'`. */
export type Pet<I extends Int64Mode = 'bigint'> = { [K in keyof Schemas['Pet']]: K extends 'id' | 'categoryId' ? Int64Of<I> : Schemas['Pet'][K] }
/** A pet to add. categoryId may be a bigint, a safe-integer number or a decimal string. */
export type NewPet = Omit<Schemas['NewPet'], 'categoryId'> & { categoryId: Int64Input }

export interface ListPetsParams {
  /** 1 to 100; the service's default is 20. */
  limit?: number
  status?: PetStatus
  /** The position of a page, from a previous response's `next`. */
  cursor?: string
}

export interface PetPage<I extends Int64Mode = 'bigint'> {
  pets: Array<Pet<I>>
  /** The cursor of the next page, from the Link rel="next" header; undefined on the last page. */
  next: string | undefined
}

/** What every call accepts: a signal that aborts it, and `meta: true` for the response's metadata. */
export interface CallOptions<M extends boolean = false> {
  /** Aborts the call, its retries and their waits; the call rejects with the signal's reason. */
  signal?: AbortSignal
  /** true: the call resolves to `{ data, meta }` instead of the data alone. */
  meta?: M
}

export type ListOptions<M extends boolean = false> = ListPetsParams & CallOptions<M>
export type CreateOptions<M extends boolean = false> = CallOptions<M> & {
  /** Sent as Idempotency-Key; a fresh UUID by default. */
  idempotencyKey?: string
}

/** A call's data with its response's metadata, for `{ meta: true }`. */
export interface WithMeta<T> { data: T, meta: ResponseMeta }
/** The data alone, or `{ data, meta }` when the call was given `meta: true`. */
export type CallResult<T, M extends boolean> = M extends true ? WithMeta<T> : T
/** @deprecated CallResult's name in 1.0, kept so that code written against 1.0 still compiles. */
export type Answer<T, M extends boolean> = CallResult<T, M>

export interface PetstoreClientOptions<I extends Int64Mode = 'bigint'> {
  /** The base address including /v1, e.g. http://127.0.0.1:8080/v1. */
  baseUrl: string
  /** An API key (psk_…), sent as Authorization: Bearer. */
  apiKey: string
  /** A fetch implementation; the global fetch by default. */
  fetch?: typeof globalThis.fetch
  /** Retries on network errors, timeouts, 429 and 503; false for none. */
  retry?: RetryOptions | false
  /** How long one attempt may take, body included; then it fails with code `timeout` (and is retried). Default 30 000 ms. */
  timeoutMs?: number
  /** How `id` and `categoryId` come back: 'bigint' (default) or 'string', which JSON.stringify accepts. */
  int64?: I
  /** pets.get warns once when its Sunset is this close. Default 180 days. */
  sunsetWarningDays?: number
  /** Where that warning goes; console.warn by default. */
  onWarning?: (message: string) => void
  /**
   * Replies kept to revalidate reads with If-None-Match (the body comes from here on 304), up to
   * `maxBytes` (4 MiB by default); false sends every read unconditionally.
   */
  cache?: CacheOptions | false
}

/** The pets operations. */
export interface PetsApi<I extends Int64Mode = 'bigint'> {
  /** One page, in id order; `next` is the cursor of the following page. */
  list<M extends boolean = false>(options?: ListOptions<M>): Promise<CallResult<PetPage<I>, M>>
  /** Every pet (with that status), page after page, following Link rel="next" to the end. */
  all(options?: Omit<ListPetsParams, 'cursor'> & { signal?: AbortSignal }): AsyncGenerator<Pet<I>, void, undefined>
  /** Sends an Idempotency-Key (a fresh UUID unless given) and reuses it on its own retries. */
  create<M extends boolean = false>(pet: NewPet, options?: CreateOptions<M>): Promise<CallResult<Pet<I>, M>>
  /**
   * @deprecated The service removes this operation at its Sunset date (2030-12-05); use
   * `pets.list({ status })` or `pets.all({ status })` instead.
   */
  get<M extends boolean = false>(petId: Int64Input, options?: CallOptions<M>): Promise<CallResult<Pet<I>, M>>
}

export interface PetstoreClient<I extends Int64Mode = 'bigint'> {
  pets: PetsApi<I>
  /** @deprecated Use `pets.list(params)`. */
  listPets(params?: ListPetsParams): Promise<PetPage<I>>
  /** @deprecated Use `pets.create(pet, options)`. */
  createPet(pet: NewPet, options?: { idempotencyKey?: string }): Promise<Pet<I>>
  /** @deprecated Use `pets.list({ status })` or `pets.all({ status })`: the service removes getPet at its Sunset date (2030-12-05). */
  getPet(petId: Int64Input): Promise<Pet<I>>
}

const DAY_MS = 86_400_000

export function createPetstoreClient<I extends Int64Mode = 'bigint'> (options: PetstoreClientOptions<I>): PetstoreClient<I> {
  const send = createTransport(options)
  const readPath = createRevalidatingRead(send, options.cache === false ? undefined : createReplyCache(options.cache))
  const int64: Int64Mode = options.int64 ?? 'bigint'
  const warnWithin = (options.sunsetWarningDays ?? 180) * DAY_MS
  const warn = options.onWarning ?? ((message: string) => { console.warn(message) })
  let sunsetWarned = false

  function read<T> ({ response, text, revalidated }: ReceivedResponse & { revalidated?: boolean }): WithMeta<T> {
    return { data: parseJson(text, int64) as T, meta: metaOf(response, revalidated) }
  }

  function noticeSunset (response: Response) {
    const sunset = Date.parse(response.headers.get('sunset') ?? '')
    if (sunsetWarned || Number.isNaN(sunset) || sunset - Date.now() > warnWithin) return
    sunsetWarned = true
    warn(`Petstore: getPet is deprecated and is removed on ${new Date(sunset).toUTCString()}; use pets.list({ status }) instead.`)
  }

  async function list ({ limit, status, cursor, signal }: ListOptions<boolean> = {}): Promise<WithMeta<PetPage<I>>> {
    const query = new URLSearchParams()
    if (limit !== undefined) query.set('limit', String(limit))
    if (status !== undefined) query.set('status', status)
    if (cursor !== undefined) query.set('cursor', cursor)
    const received = await readPath(`pets${query.size ? `?${query}` : ''}`, signal)
    const { data, meta } = read<Array<Pet<I>>>(received)
    const link = nextLink(received.response.headers.get('link'))
    return { data: { pets: data, next: link === undefined ? undefined : cursorOf(link) }, meta }
  }

  async function create (pet: NewPet, { idempotencyKey, signal }: CreateOptions<boolean> = {}): Promise<WithMeta<Pet<I>>> {
    const body = { ...pet, categoryId: toInt64(pet.categoryId, 'categoryId') }
    const headers = { 'idempotency-key': idempotencyKey ?? randomUuid() }
    return read(await send('POST', 'pets', { body, headers, signal }))
  }

  async function get (petId: Int64Input, { signal }: CallOptions<boolean> = {}): Promise<WithMeta<Pet<I>>> {
    const received = await readPath(`pets/${toInt64(petId, 'petId')}`, signal)
    noticeSunset(received.response)
    return read(received)
  }

  const pets: PetsApi<I> = {
    list: (listOptions) => resultOf(list(listOptions), listOptions?.meta),
    create: (pet, createOptions) => resultOf(create(pet, createOptions), createOptions?.meta),
    get: (petId, callOptions) => resultOf(get(petId, callOptions), callOptions?.meta),
    async * all ({ signal, ...params } = {}) {
      let cursor: string | undefined
      do {
        const { data: page } = await list({ limit: 100, ...params, cursor, signal })
        yield * page.pets
        cursor = page.next
      } while (cursor !== undefined)
    }
  }
  return {
    pets,
    listPets: (params) => pets.list(params),
    createPet: (pet, createOptions) => pets.create(pet, createOptions),
    getPet: (petId) => pets.get(petId)
  }
}

async function resultOf<T, M extends boolean> (pending: Promise<WithMeta<T>>, meta: M | undefined): Promise<CallResult<T, M>> {
  const result = await pending
  return (meta === true ? result : result.data) as CallResult<T, M>
}

/**
 * The next page is asked of this client's own base address with the link's cursor, so the key
 * is never sent to a host other than the one it was given for.
 */
function cursorOf (link: string): string | undefined {
  return new URL(link, 'http://link.invalid/').searchParams.get('cursor') ?? undefined
}
