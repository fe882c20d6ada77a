import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { chromium, type BrowserContext } from 'playwright-core'

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']

/**
 * Debian's Chromium, headless, on a fresh profile. Without it the test cannot run: undefined
 * after a loud message, and under CI a failure rather than a skip. Closed when the test ends.
 */
export async function launchChromium (t: TestContext): Promise<BrowserContext | undefined> {
  if (!existsSync(CHROMIUM)) {
    const message = `${CHROMIUM} is missing: install it with apt-get install -y chromium (.ci/run does)`
    if (process.env.CI === 'true') assert.fail(message)
    process.stderr.write(`\n*** SKIPPED a browser test: ${message} ***\n\n`)
    t.skip(message)
    return undefined
  }
  const userDataDir = mkdtempSync(join(tmpdir(), 'petstore-chromium-'))
  const browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
  // Registered before any server of the test, so it runs first: the browser's keep-alive
  // connections would otherwise hold the server's close for a minute.
  t.after(async () => { await browser.close(); rmSync(userDataDir, { recursive: true, force: true }) })
  return browser
}
