import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import Fastify from 'fastify'
import { noneMatchNames } from '../http/entity-tags.ts'
import { representationFor, staticReply, type StaticReply } from './static-reply.ts'

const SCALAR_CONFIGURATION = {
  url: '/v1/openapi.json',
  pageTitle: 'Petstore API reference',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: false,
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  defaultOpenAllTags: true,
  agent: { disabled: true },
  mcp: { disabled: true },
  authentication: { preferredSecurityScheme: 'bearerAuth' }
} as const

const PAGE_URL = '/docs/'
const SCRIPT_URL = '/docs/js/scalar.js'
/** The page's own reference to its script, which the page is served with versioned. */
const SCRIPT_REFERENCE = '"js/scalar.js"'
/**
 * An empty icon of the page's own: without one the browser asks for /favicon.ico, which is the
 * app's 404 and an error in the console. A data: address makes no request at all.
 */
const ICON = '<link rel="icon" href="data:,">'
/** The page and its redirect, then the script: the routes of the reference plugin, and nothing else under /docs. */
const DOCS_URLS = ['/docs', PAGE_URL, SCRIPT_URL]
// The inner reply's framing and caching are this server's own to set.
const OWN_HEADERS = new Set(['content-length', 'connection', 'date', 'transfer-encoding', 'keep-alive', 'cache-control', 'etag'])
/**
 * Bodies go out in chunks of this size: the send timeout (http/send-timeout.ts) sees progress
 * per completed write, and a 4 MB script in one write shows none until all of it is taken.
 */
const CHUNK_BYTES = 64 * 1024
/** The script at its versioned address never changes: a year, and no revalidation. */
const IMMUTABLE = 'public, max-age=31536000, immutable'
/** The page, and the script asked without its version: kept, but checked (a 304 when unchanged). */
const REVALIDATE = 'no-cache'

interface DocsAsset { status: number, headers: Record<string, string | string[]>, content: StaticReply }

/**
 * The page's own small server: the reference plugin carries its 4 MB script inside its module,
 * and holds it in memory once loaded. It is loaded on the first visit to /docs, so an instance
 * that only serves the API never pays for it.
 */
async function loadDocsServer (): Promise<FastifyInstance> {
  const { default: apiReference } = await import('@scalar/fastify-api-reference')
  const server = Fastify({ logger: false })
  await server.register(apiReference, { routePrefix: '/docs', configuration: SCALAR_CONFIGURATION })
  await server.ready()
  return server
}

async function assetOf (server: FastifyInstance, url: string, rewrite?: (body: string) => string): Promise<DocsAsset> {
  const inner = await server.inject({ method: 'GET', url })
  // The plugin serves its own routes; anything else is a fault, and its body (Fastify's own
  // words) stays out of the reply.
  if (inner.statusCode >= 400) throw new Error(`the docs page replied ${inner.statusCode} for ${url}`)
  const headers: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(inner.headers)) {
    if (value !== undefined && !OWN_HEADERS.has(name)) headers[name] = typeof value === 'number' ? String(value) : value
  }
  const body = rewrite ? Buffer.from(rewrite(inner.body)) : inner.rawPayload
  return { status: inner.statusCode, headers, content: await staticReply(body, String(headers['content-type'] ?? '')) }
}

/** Every docs reply, made once: the page names its script by the script's content hash. */
async function loadDocs (): Promise<{ assets: Map<string, DocsAsset>, close(): Promise<void> }> {
  const server = await loadDocsServer()
  try {
    const script = await assetOf(server, SCRIPT_URL)
    const versioned = `"js/scalar.js?v=${script.content.hash}"`
    const page = await assetOf(server, PAGE_URL, (html) => {
      if (!html.includes(SCRIPT_REFERENCE)) throw new Error('the docs page no longer names its script as js/scalar.js')
      if (!html.includes('</head>')) throw new Error('the docs page no longer has a </head> to put its icon before')
      return html.replace(SCRIPT_REFERENCE, versioned).replace('</head>', `  ${ICON}\n  </head>`)
    })
    const redirect = await assetOf(server, '/docs')
    return { assets: new Map([['/docs', redirect], [PAGE_URL, page], [SCRIPT_URL, script]]), close: () => server.close() }
  } catch (error) {
    await server.close()
    throw error
  }
}

function * chunks (body: Buffer): Generator<Buffer> {
  for (let start = 0; start < body.length; start += CHUNK_BYTES) yield body.subarray(start, start + CHUNK_BYTES)
}

/**
 * GET /docs: an interactive reference of the served OpenAPI document. The page's script is
 * bundled in the plugin and served from here; fonts, telemetry and the hosted helpers are off,
 * so the page loads nothing from outside this server and works offline.
 *
 * The replies are fixed, so they are served as static files are: made once and shared by every
 * visitor, compressed once (Brotli or gzip, as Accept-Encoding asks), each with a strong ETag
 * and a 304 for a client that has it. The page names its script at a versioned address
 * (`?v=` its content hash) that browsers keep for a year without asking again. Any other path
 * under /docs is the app's 404.
 *
 * From memory, not with @fastify/static: it serves files, and these bytes come from inside the
 * plugin's module, so each instance would first have to write them to a folder, while the
 * service writes nothing outside its data folder (a read-only container works). And its ETags
 * are weak, made of each file's size and modification time, which differ between instances:
 * a browser's revalidation would miss on every instance but the one that served it.
 */
export async function docsRoutes (app: FastifyInstance) {
  let docs: ReturnType<typeof loadDocs> | undefined
  app.addHook('onClose', async () => { if (docs) await (await docs.catch(() => undefined))?.close() })

  function loaded () {
    if (docs === undefined) {
      docs = loadDocs()
      // A failure is not kept: the next visit asks again.
      docs.catch(() => { docs = undefined })
    }
    return docs
  }

  async function serveDocs (request: FastifyRequest<{ Querystring: { v?: string } }>, reply: FastifyReply) {
    const url = request.routeOptions.url!
    const { status, headers, content } = (await loaded()).assets.get(url)!
    const chosen = representationFor(content, request.headers['accept-encoding'])
    const immutable = url === SCRIPT_URL && request.query.v === content.hash
    reply.headers(headers).header('etag', chosen.etag).header('cache-control', immutable ? IMMUTABLE : REVALIDATE)
    if (content.representations.br) {
      const vary = reply.getHeader('vary')
      reply.header('vary', vary ? `${String(vary)}, Accept-Encoding` : 'Accept-Encoding')
    }
    if (chosen.encoding !== 'identity') reply.header('content-encoding', chosen.encoding)
    if (noneMatchNames(request.headers['if-none-match'], chosen.etag)) return reply.code(304).send()
    reply.code(status).header('content-length', chosen.body.length)
    // HEAD: Node sends the headers alone.
    return reply.send(chosen.body.length > CHUNK_BYTES && request.method === 'GET' ? Readable.from(chunks(chosen.body)) : chosen.body)
  }

  for (const url of DOCS_URLS) {
    app.route({ method: ['GET', 'HEAD'], url, schema: { hide: true }, handler: serveDocs })
  }
}
