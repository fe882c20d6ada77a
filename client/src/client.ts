import { PetstoreError, type ErrorCode } from './errors.ts'
import type { components } from './generated/openapi.ts'
import { parseJson, stringifyJson, toInt64 } from './json.ts'
import { nextLink } from './link.ts'
import { retryAfterSeconds, retrySettings, withRetries, type RetryOptions } from './retry.ts'
import { randomUuid } from './uuid.ts'

export type Pet = components['schemas']['Pet']
export type PetStatus = components['schemas']['PetStatus']
/** A pet to add. categoryId may be a number when it is a safe integer; pets come back with bigint. */
export type NewPet = Omit<components['schemas']['NewPet'], 'categoryId'> & { categoryId: bigint | number }

export interface ListPetsParams {
  /** 1 to 100; the service's default is 20. */
  limit?: number
  status?: PetStatus
  /** The position of a page, from a previous answer's `next`. */
  cursor?: string
}

export interface PetPage {
  pets: Pet[]
  /** The cursor of the next page, from the Link rel="next" header; undefined on the last page. */
  next: string | undefined
}

export interface PetstoreClientOptions {
  /** The base address including /v1, e.g. http://127.0.0.1:8080/v1. */
  baseUrl: string
  /** An API key (psk_…), sent as Authorization: Bearer. */
  apiKey: string
  /** A fetch implementation; the global fetch by default. */
  fetch?: typeof globalThis.fetch
  /** Retries on network errors, 429 and 503; false for none. */
  retry?: RetryOptions | false
  /** getPet warns once when its Sunset is this close. Default 180 days. */
  sunsetWarningDays?: number
  /** Where that warning goes; console.warn by default. */
  onWarning?: (message: string) => void
}

export interface PetstoreClient {
  listPets(params?: ListPetsParams): Promise<PetPage>
  /** Sends an Idempotency-Key (a fresh UUID unless given) and reuses it on its own retries. */
  createPet(pet: NewPet, options?: { idempotencyKey?: string }): Promise<Pet>
  /**
   * @deprecated The service removes getPet at its Sunset date (2030-12-05); use
   * `listPets({ status })` or `pets.all({ status })` instead.
   */
  getPet(petId: bigint | number): Promise<Pet>
  pets: {
    /** Every pet (with that status), page after page, following Link rel="next" to the end. */
    all(params?: Omit<ListPetsParams, 'cursor'>): AsyncGenerator<Pet, void, undefined>
  }
}

const DAY_MS = 86_400_000

export function createPetstoreClient (options: PetstoreClientOptions): PetstoreClient {
  const base = new URL(options.baseUrl.replace(/\/+$/, '') + '/')
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
  const retry = retrySettings(options.retry)
  const warnWithin = (options.sunsetWarningDays ?? 180) * DAY_MS
  const warn = options.onWarning ?? ((message: string) => { console.warn(message) })
  let sunsetWarned = false

  async function call (method: string, path: string, init: { body?: unknown, headers?: Record<string, string> } = {}): Promise<Response> {
    const url = new URL(path, base)
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${options.apiKey}`, ...init.headers }
    if (init.body !== undefined) headers['content-type'] = 'application/json'
    const body = init.body === undefined ? undefined : stringifyJson(init.body)
    // Every call is a GET or a createPet carrying its Idempotency-Key, so each is safe to send again.
    return withRetries(retry, async () => {
      let response: Response
      try {
        response = await fetchImpl(url, { method, headers, body })
      } catch (error) {
        throw new PetstoreError({ status: 0, code: 'network_error', message: `${method} ${url.pathname} got no answer: ${(error as Error).message}`, cause: error })
      }
      if (response.ok) return response
      throw await errorOf(response, retryAfterSeconds(response.headers.get('retry-after')))
    })
  }

  async function json<T> (response: Response): Promise<T> {
    return parseJson(await response.text()) as T
  }

  function noticeSunset (response: Response) {
    const sunset = Date.parse(response.headers.get('sunset') ?? '')
    if (sunsetWarned || Number.isNaN(sunset) || sunset - Date.now() > warnWithin) return
    sunsetWarned = true
    warn(`Petstore: getPet is deprecated and is removed on ${new Date(sunset).toUTCString()}; use listPets({ status }) instead.`)
  }

  async function listPets (params: ListPetsParams = {}): Promise<PetPage> {
    const query = new URLSearchParams()
    if (params.limit !== undefined) query.set('limit', String(params.limit))
    if (params.status !== undefined) query.set('status', params.status)
    if (params.cursor !== undefined) query.set('cursor', params.cursor)
    const response = await call('GET', `pets${query.size ? `?${query}` : ''}`)
    const link = nextLink(response.headers.get('link'))
    return { pets: await json<Pet[]>(response), next: link === undefined ? undefined : cursorOf(link) }
  }

  return {
    listPets,
    async createPet (pet, callOptions = {}) {
      const body = { ...pet, categoryId: toInt64(pet.categoryId, 'categoryId') }
      const headers = { 'idempotency-key': callOptions.idempotencyKey ?? randomUuid() }
      return json<Pet>(await call('POST', 'pets', { body, headers }))
    },
    async getPet (petId) {
      const response = await call('GET', `pets/${toInt64(petId, 'petId')}`)
      noticeSunset(response)
      return json<Pet>(response)
    },
    pets: {
      async * all (params = {}) {
        let cursor: string | undefined
        do {
          const page = await listPets({ limit: 100, ...params, cursor })
          yield * page.pets
          cursor = page.next
        } while (cursor !== undefined)
      }
    }
  }
}

/**
 * The next page is asked of this client's own base address with the link's cursor, so the key
 * is never sent to a host other than the one it was given for.
 */
function cursorOf (link: string): string | undefined {
  return new URL(link, 'http://link.invalid/').searchParams.get('cursor') ?? undefined
}

async function errorOf (response: Response, retryAfter: number | undefined): Promise<PetstoreError> {
  const requestId = response.headers.get('x-request-id') ?? undefined
  const text = await response.text().catch(() => '')
  let body: { code?: unknown, message?: unknown, details?: unknown } | undefined
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  if (typeof body?.code === 'string' && typeof body.message === 'string') {
    return new PetstoreError({
      status: response.status,
      code: body.code as ErrorCode,
      message: body.message,
      requestId,
      details: Array.isArray(body.details) ? body.details : undefined,
      retryAfterSeconds: retryAfter
    })
  }
  return new PetstoreError({ status: response.status, code: 'unexpected_response', message: `HTTP ${response.status} without an Error body`, requestId, retryAfterSeconds: retryAfter })
}
