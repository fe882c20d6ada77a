import type { TestContext } from 'node:test'
import { openStore } from '../../src/store/index.ts'
import type { Store } from '../../src/store/types.ts'
import { issueKey } from './app.ts'
import { freshSchema, schemaUrl, testDatabaseAddress } from './pg-schema.ts'
import { startServer, type ServerProcess } from './processes.ts'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts'

/**
 * A server process on a fresh schema of its own that reaches PostgreSQL only through a TCP
 * proxy of the test, so that the test can break the link without touching the shared server.
 * `setup` is a store of the test's own on the same schema, migrated, direct (not through the
 * proxy): to look at what was stored whatever the link's state.
 */
export async function serverBehindProxy (t: TestContext, env: Record<string, string>): Promise<{ setup: Store, proxy: TcpProxy, server: ServerProcess, key: string }> {
  const { schema, url } = freshSchema(t)
  const setup = await openStore(url)
  t.after(() => setup.close())
  await setup.migrate()
  const { key } = await issueKey(setup)
  const proxy = await startTcpProxy(testDatabaseAddress())
  t.after(() => proxy.close())
  const server = await startServer(t, { DATABASE_URL: schemaUrl(schema, proxy), ...env })
  return { setup, proxy, server, key }
}
