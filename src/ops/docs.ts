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

/**
 * GET /docs: an interactive reference of the served OpenAPI document. The page's script is
 * bundled in the plugin and served from here; fonts, telemetry and the hosted helpers are off,
 * so the page loads nothing from outside this server and works offline.
 */
export async function docsRoutes (app: FastifyInstance) {
  let docsServer: Promise<FastifyInstance> | undefined
  app.addHook('onClose', async () => { if (docsServer) await (await docsServer).close() })

  async function serveDocs (request: FastifyRequest, reply: FastifyReply) {
    docsServer ??= loadDocsServer()
    const answer = await (await docsServer).inject({ method: request.method as 'GET', url: request.url, headers: { accept: request.headers.accept ?? '*/*' } })
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !['content-length', 'connection', 'date', 'transfer-encoding', 'keep-alive'].includes(name)) reply.header(name, value)
    }
    return reply.code(answer.statusCode).send(answer.rawPayload)
  }

  for (const url of ['/docs', '/docs/', '/docs/*']) {
    app.route({ method: ['GET', 'HEAD'], url, schema: { hide: true }, handler: serveDocs })
  }
}
