import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import Fastify from 'fastify'

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

/**
 * The page's own small server: the reference plugin carries its 4 MB script inside its module,
 * about 25 MB of memory once loaded. It is loaded on the first visit to /docs, so an instance
 * that only serves the API never pays for it.
 */
async function loadDocsServer (): Promise<FastifyInstance> {
  const { default: apiReference } = await import('@scalar/fastify-api-reference')
  const server = Fastify({ logger: false })
  await server.register(apiReference, { routePrefix: '/docs', configuration: SCALAR_CONFIGURATION })
  await server.ready()
  return server
}

/** The page, its redirect and its script: the routes of the reference plugin, and nothing else under /docs. */
const DOCS_URLS = ['/docs', '/docs/', '/docs/js/scalar.js']
// The inner answer's framing is this server's own to set.
const HOP_HEADERS = new Set(['content-length', 'connection', 'date', 'transfer-encoding', 'keep-alive'])
/**
 * Bodies go out in pieces of this size: the send timeout (http/send-timeout.ts) sees progress
 * per completed write, and a 4 MB script in one write shows none until all of it is taken.
 */
const PIECE_BYTES = 64 * 1024

interface DocsAnswer { status: number, headers: Record<string, string | string[]>, body: Buffer }

function * pieces (body: Buffer): Generator<Buffer> {
  for (let start = 0; start < body.length; start += PIECE_BYTES) yield body.subarray(start, start + PIECE_BYTES)
}

/**
 * GET /docs: an interactive reference of the served OpenAPI document. The page's script is
 * bundled in the plugin and served from here; fonts, telemetry and the hosted helpers are off,
 * so the page loads nothing from outside this server and works offline. The answers are fixed,
 * so each is asked of the plugin once and kept: every visitor shares one copy of the script.
 * Any other path under /docs is the app's 404.
 */
export async function docsRoutes (app: FastifyInstance) {
  let docsServer: Promise<FastifyInstance> | undefined
  const answers = new Map<string, Promise<DocsAnswer>>()
  app.addHook('onClose', async () => { if (docsServer) await (await docsServer).close() })

  async function answerOf (url: string): Promise<DocsAnswer> {
    docsServer ??= loadDocsServer()
    const answer = await (await docsServer).inject({ method: 'GET', url })
    // The plugin answers its own routes; anything else is a fault, and its body (Fastify's own
    // words) stays out of the answer.
    if (answer.statusCode >= 400) throw new Error(`the docs page answered ${answer.statusCode} for ${url}`)
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = typeof value === 'number' ? String(value) : value
    }
    return { status: answer.statusCode, headers, body: answer.rawPayload }
  }

  async function serveDocs (request: FastifyRequest, reply: FastifyReply) {
    const url = request.routeOptions.url!
    let answer = answers.get(url)
    if (answer === undefined) {
      answer = answerOf(url)
      answers.set(url, answer)
      // A failure is not kept: the next visit asks again.
      answer.catch(() => answers.delete(url))
    }
    const { status, headers, body } = await answer
    reply.code(status).headers(headers).header('content-length', body.length)
    // HEAD: Node sends the headers alone.
    return reply.send(body.length > PIECE_BYTES && request.method === 'GET' ? Readable.from(pieces(body)) : body)
  }

  for (const url of DOCS_URLS) {
    app.route({ method: ['GET', 'HEAD'], url, schema: { hide: true }, handler: serveDocs })
  }
}
