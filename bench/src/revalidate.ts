import type autocannon from 'autocannon'
import type { Scenario } from './load.ts'
import { luaString } from './wrk.ts'

/**
 * Conditional requests: a client that holds a reply asks again with `If-None-Match` and its
 * tag, and gets 304 without a body. The tags are learned from the server under load before the
 * load starts (`prepare`), each server's own: a tag made here would only prove that the bench
 * hashes the way the server does, and a server that tags its replies differently (the baseline)
 * is still measured.
 */

/** How many pets `revalidate get by id` learns the tags of: a fixed set, so that learning takes a moment at any size of store. */
export const REVALIDATED_PETS = 1000

/** A path and the tag the server sent with its 200 for it. */
export interface Tagged { path: string, tag: string }

/** The ids learned, spread evenly over 1..pets (every id when there are no more than REVALIDATED_PETS). */
export function revalidatedIds (pets: number): number[] {
  const count = Math.min(pets, REVALIDATED_PETS)
  return Array.from({ length: count }, (_, i) => 1 + Math.floor(i * pets / count))
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` })

/** A well-formed entity tag no reply has. */
const LEARNING_TAG = '"learning"'

/**
 * Asks for each path once and keeps its tag, then asks for the first path again with it: a
 * server that sends no tag, or does not answer its own tag with 304, cannot run the scenario.
 */
export async function learnTags (url: string, paths: string[], key: string): Promise<Tagged[]> {
  const tagged: Tagged[] = new Array(paths.length)
  let next = 0
  // A few at a time: a thousand one after the other would take seconds on a busy machine.
  const worker = async () => {
    for (let i = next++; i < paths.length; i = next++) {
      // Asked conditionally, with a tag nothing has: the baseline tags only the replies to
      // conditional requests, so that the other scenarios measure it as it was.
      const response = await fetch(url + paths[i], { headers: { ...auth(key), 'if-none-match': LEARNING_TAG } })
      await response.arrayBuffer()
      const tag = response.headers.get('etag')
      if (response.status !== 200 || tag === null) throw new Error(`GET ${paths[i]} at ${url}: ${response.status} ${tag === null ? 'without' : 'with'} an ETag; a revalidate scenario needs a 200 with one`)
      tagged[i] = { path: paths[i]!, tag }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  const first = tagged[0]!
  const again = await fetch(url + first.path, { headers: { ...auth(key), 'if-none-match': first.tag } })
  await again.arrayBuffer()
  if (again.status !== 304) throw new Error(`GET ${first.path} at ${url} with If-None-Match: ${first.tag} replied ${again.status}, not 304`)
  return tagged
}

const conditional = ({ path, tag }: Tagged, key: string): autocannon.Request =>
  ({ method: 'GET', path, headers: { ...auth(key), 'if-none-match': tag } })

/**
 * The scenario as it runs once the tags are known: each request is one of `tagged`, drawn at
 * random per request when there are several. In Lua every request is formatted once, in init().
 */
function revalidating (name: string, tagged: Tagged[], key: string): Scenario {
  const requests = tagged.map((t) => conditional(t, key))
  const lua = `
local requests = {}
function init(args)
  math.randomseed(tonumber(args[1]))
  local tagged = {
${tagged.map(({ path, tag }) => `    { ${luaString(path)}, ${luaString(tag)} },`).join('\n')}
  }
  for i, t in ipairs(tagged) do
    requests[i] = wrk.format("GET", t[1], { ["Authorization"] = ${luaString(`Bearer ${key}`)}, ["If-None-Match"] = t[2] })
  end
end
function request() return requests[math.random(1, #requests)] end
`
  return {
    name,
    build: () => requests.length === 1
      ? requests
      : [{ ...requests[0]!, setupRequest: (request) => ({ ...request, ...requests[Math.floor(Math.random() * requests.length)]! }) }],
    lua: () => lua
  }
}

/** A scenario whose requests exist only once prepared: asking it for them before is a mistake in the bench. */
function learning (name: string, paths: (pets: number) => string[]): Scenario {
  const unprepared = () => { throw new Error(`the scenario "${name}" learns its tags from the server: prepare it first`) }
  return {
    name,
    build: unprepared,
    lua: unprepared,
    prepare: async (url, pets, key) => revalidating(name, await learnTags(url, paths(pets), key), key)
  }
}

/** The first page again and again, with the tag it always has: a full page of the seeded pets, which creates never change. */
export const revalidateList = learning('revalidate list 20', () => ['/v1/pets?limit=20'])

/** Pets at random, like `get by id`, each with its own tag: drawn from the learned set (revalidatedIds). */
export const revalidateGet = learning('revalidate get by id', (pets) => revalidatedIds(pets).map((id) => `/v1/pets/${id}`))
