import type { TestContext } from 'node:test'
import type { Redis } from 'ioredis'
import { buildApp } from '../../src/app.ts'
import { createTestStore, injectChecked, issueKey, testConfig } from './app.ts'

/** Two instances of the service on one store, as behind a load balancer. */
export async function twoInstances (t: TestContext, env: Record<string, string>, redis?: () => Promise<Redis>) {
  const { store, cleanup } = await createTestStore()
  const { key } = await issueKey(store)
  const apps = [
    await buildApp({ config: testConfig(env), store, redis: await redis?.() }),
    await buildApp({ config: testConfig(env), store, redis: await redis?.() })
  ]
  t.after(async () => { for (const app of apps) await app.close(); await cleanup() })
  const list = (i: number, authorization = `Bearer ${key}`, remoteAddress = '127.0.0.1') =>
    injectChecked(apps[i]!, { url: '/v1/pets', headers: { authorization }, remoteAddress })
  return { list }
}
