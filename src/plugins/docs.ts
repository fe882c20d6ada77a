import apiReference from '@scalar/fastify-api-reference'
import type { FastifyInstance } from 'fastify'

/** Where the deprecation notice of getPet lands on the docs page (the Link rel="deprecation" target). */
export const GET_PET_DOCS_FRAGMENT = 'tag/animals/GET/pets/{petId}'

/**
 * GET /docs: an interactive reference of the served OpenAPI document. The page's script is
 * bundled in the plugin and served from here; fonts, telemetry and the hosted helpers are off,
 * so the page loads nothing from outside this server and works offline.
 */
export async function docsRoutes (app: FastifyInstance) {
  await app.register(apiReference, {
    routePrefix: '/docs',
    configuration: {
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
    }
  })
}
