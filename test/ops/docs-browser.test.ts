import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { test } from 'node:test'
import type { TestContext } from 'node:test'
import type { BrowserContext, Page } from 'playwright-core'
import { buildApp } from '../../src/app.ts'
import { launchChromium } from '../helpers/chromium.ts'
import { createTestStore, issueKey, testConfig } from '../helpers/app.ts'

/**
 * A browser and a listening server on a fresh store with one key, and the paths the server was
 * asked for (the browser's own requests, such as /favicon.ico, are not page events); undefined
 * when Chromium is missing.
 */
async function browserAndServer (t: TestContext): Promise<{ browser: BrowserContext, origin: string, key: string, served: string[] } | undefined> {
  const browser = await launchChromium(t)
  if (!browser) return undefined
  const { store, cleanup } = await createTestStore()
  const { key } = await issueKey(store)
  const app = await buildApp({ config: testConfig(), store })
  t.after(async () => { await app.close(); await cleanup() })
  const served: string[] = []
  await app.listen({ port: 0, host: '127.0.0.1' })
  // Node's own event: every request that arrives, whichever route or 404 handles it.
  app.server.on('request', (request: { url?: string }) => { served.push(request.url ?? '') })
  return { browser, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, key, served }
}

test('/docs shows the three operations, the deprecation and the decisions, calls listPets through "try it", and loads nothing from outside', { timeout: 120_000 }, async (t) => {
  const served = await browserAndServer(t)
  if (!served) return
  const { browser, origin, key } = served

  const name = `Docs page pet ${Math.random().toString(36).slice(2, 8)}`
  const created = await fetch(`${origin}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: `{"name":"${name}","categoryId":9223372036854775807,"status":"available"}`
  })
  assert.equal(created.status, 201)
  const petId = JSON.parse(await created.text()).id as number
  // The deprecation notice the API points callers at: the Link rel="deprecation" of a getPet response.
  const link = (await fetch(`${origin}/v1/pets/${petId}`, { headers: { authorization: `Bearer ${key}` } })).headers.get('link') ?? ''
  const notice = /<([^>]+)>; rel="deprecation"/.exec(link)?.[1]
  if (!notice?.startsWith(`${origin}/docs#`)) assert.fail(`Link names the docs page: ${link}`)
  // RFC 3986 allows no braces: {petId} travels percent-encoded, and the page decodes it.
  assert.equal(notice, `${origin}/docs#tag/animals/GET/pets/%7BpetId%7D`)

  const shots = mkdtempSync(join(tmpdir(), 'petstore-docs-shot-'))
  t.after(() => rmSync(shots, { recursive: true, force: true }))
  await useDocsPage(browser.pages()[0] ?? await browser.newPage(), { origin, key, name, notice, shots })
  assert.deepEqual(served.served.filter((url) => url.startsWith('/favicon')), [], 'the page brings its own icon: the browser asks for none')
})
interface DocsCase { origin: string, key: string, name: string, notice: string, shots: string }

async function useDocsPage (page: Page, { origin, key, name, notice, shots }: DocsCase) {
  // The section's id is the fragment as the page decodes it.
  const fragment = decodeURIComponent(notice.slice(notice.indexOf('#') + 1))
  const requested: string[] = []
  page.on('request', (request) => { requested.push(request.url()) })
  // A failed load (the favicon.ico a page without an icon makes the browser ask for) shows here.
  const consoleErrors: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(`${message.text()} at ${message.location().url}`) })
  page.on('pageerror', (error) => { consoleErrors.push(error.message) })

  await page.goto(notice, { waitUntil: 'networkidle' })

  // The fragment lands on getPet's section, which shows the deprecation.
  const getPet = page.locator(`[id$="${fragment}"]`)
  await getPet.waitFor()
  // The page scrolls to the fragment once it has rendered the section, later on a busy machine:
  // the section's place is read until it is in view, for 10 s at most.
  const topOfSection = () => getPet.evaluate((element) => element.getBoundingClientRect().top)
  let top = await topOfSection()
  for (const until = Date.now() + 10_000; Math.abs(top) >= 50 && Date.now() < until; top = await topOfSection()) await delay(100)
  assert.ok(Math.abs(top) < 50, `the getPet section is scrolled into view (top ${top})`)
  assert.match(await getPet.innerText(), /Deprecated[\s\S]*Get an animal \(deprecated\)[\s\S]*to be removed on 2030-12-05/)

  // The three operations, each with its own section.
  const sidebar = await page.locator('nav, aside').first().innerText()
  for (const summary of ['List all animals', 'Add an animal', 'Get an animal (deprecated)']) assert.ok(sidebar.includes(summary), `sidebar lists ${summary}`)
  for (const operation of ['tag/animals/GET/pets', 'tag/animals/POST/pets', 'tag/animals/GET/pets/{petId}']) {
    assert.equal(await page.locator(`[id$="/${operation}"]`).count(), 1, `section ${operation}`)
  }
  // The decisions where the interface is silent, the "not shown" ones among them.
  const pageText = await page.locator('body').innerText()
  assert.match(pageText, /Not shown by the interface, and not offered: updating or deleting animals, categories, orders, events\./)
  assert.match(pageText, /status default: when status is omitted on create, the pet has no status/)

  // "Try it": listPets with the key, served by this server.
  await page.locator('[id$="/tag/animals/GET/pets"]').getByRole('button', { name: /Test Request/ }).click()
  const client = page.getByRole('dialog')
  await client.getByPlaceholder('Token').fill(key)
  const responded = page.waitForResponse((response) => response.url().startsWith(`${origin}/v1/pets?`))
  await client.locator('[data-addressbar-action="send"]').filter({ visible: true }).click()
  const response = await responded
  assert.equal(response.status(), 200)
  assert.equal(response.request().headers().authorization, `Bearer ${key}`)
  await client.getByText(name).first().waitFor()
  const shown = await client.innerText()
  assert.match(shown, /200 OK/)
  assert.match(shown, new RegExp(`"name": "${name}",\\s*"categoryId": 9223372036854775807,\\s*"status": "available"`), 'the response body is shown, int64 exact')

  const screenshot = join(shots, 'docs.png')
  await page.screenshot({ path: screenshot })
  assert.ok(statSync(screenshot).size > 10_000)
  process.stdout.write(`# screenshot of /docs: ${screenshot}\n`)

  const outside = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:'))
  assert.deepEqual(outside, [], 'every request of the page goes to this server')
  assert.deepEqual(consoleErrors, [], 'the console shows no error')
}

test('the createPet form of /docs pre-fills no Idempotency-Key: each "try it" creates a pet of its own', { timeout: 120_000 }, async (t) => {
  const served = await browserAndServer(t)
  if (!served) return
  const { browser, origin, key } = served
  const page = browser.pages()[0] ?? await browser.newPage()
  await page.goto(`${origin}/docs#tag/animals/POST/pets`, { waitUntil: 'networkidle' })
  await page.locator('[id$="/tag/animals/POST/pets"]').getByRole('button', { name: /Test Request/ }).click()
  const client = page.getByRole('dialog')
  await client.getByPlaceholder('Token').fill(key)

  // The header is offered, empty and left out until the visitor fills it in.
  const row = client.locator('tr#Idempotency-Key')
  assert.equal(await row.getByRole('combobox', { name: 'Value' }).innerText(), '')
  assert.equal(await row.getByRole('checkbox').isChecked(), false)

  const ids: number[] = []
  for (let visit = 0; visit < 2; visit++) {
    const responded = page.waitForResponse((response) => response.url() === `${origin}/v1/pets` && response.request().method() === 'POST')
    await client.locator('[data-addressbar-action="send"]').filter({ visible: true }).click()
    const response = await responded
    assert.equal(response.request().headers()['idempotency-key'], undefined)
    assert.equal(response.status(), 201)
    assert.equal(response.headers()['idempotent-replayed'], undefined)
    const pet = JSON.parse(await response.text())
    assert.deepEqual(pet, { id: pet.id, name: 'Rex', categoryId: 7, status: 'available' })
    ids.push(pet.id)
  }
  assert.notEqual(ids[0], ids[1], 'the second request created a pet of its own')
})
