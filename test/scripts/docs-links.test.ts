import assert from 'node:assert/strict'
import { existsSync, globSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { test } from 'node:test'

/**
 * Every relative link of the README and the docs leads somewhere: the file or folder exists, and
 * an `#anchor` names a heading of that page (as GitHub makes its slug) or an `<a name>` in it.
 */

const ROOT = new URL('../..', import.meta.url).pathname
const PAGES = ['README.md', 'client/README.md', ...globSync('docs/**/*.md', { cwd: ROOT })].sort()

/** The page's lines outside fenced code blocks. */
function prose (text: string): string[] {
  let fenced = false
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced
      return false
    }
    return !fenced
  })
}

/** GitHub's slug of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug (heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replaceAll(' ', '-')
}

const anchorCache = new Map<string, Set<string>>()

/** The anchors a page offers: its headings' slugs (a repeated one numbered) and its `<a name>`s. */
function anchorsOf (file: string): Set<string> {
  let anchors = anchorCache.get(file)
  if (anchors) return anchors
  anchors = new Set()
  const seen = new Map<string, number>()
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading) {
      const base = slug(heading[1]!)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      anchors.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!)
  }
  anchorCache.set(file, anchors)
  return anchors
}

/** The relative links of a page: `](target)`, without the web addresses. */
function linksOf (page: string): string[] {
  const links: string[] = []
  for (const line of prose(readFileSync(join(ROOT, page), 'utf8'))) {
    for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target)
    }
  }
  return links
}

test('every relative link of the README and the docs names a file that exists, and an anchor it has', () => {
  const broken: string[] = []
  let checked = 0
  for (const page of PAGES) {
    for (const link of linksOf(page)) {
      checked++
      const [path, anchor] = link.split('#', 2) as [string, string | undefined]
      const target = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path))
      if (!existsSync(target)) {
        broken.push(`${page}: ${link}: no ${relative(ROOT, target)}`)
        continue
      }
      if (anchor === undefined) continue
      if (statSync(target).isDirectory() || !target.endsWith('.md')) {
        broken.push(`${page}: ${link}: an anchor into a file that is not a page`)
      } else if (!anchorsOf(target).has(anchor)) {
        broken.push(`${page}: ${link}: ${relative(ROOT, target)} has no heading or <a name> "${anchor}"`)
      }
    }
  }
  assert.ok(checked > 150, `links were found (${checked})`)
  assert.deepEqual(broken, [])
})

test('every alert of deploy/prometheus/alerts.yml has its runbook in docs/operations/alerts.md', () => {
  const alerts = [...readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]!)
  assert.ok(alerts.length > 0)
  const anchors = anchorsOf(join(ROOT, 'docs/operations/alerts.md'))
  assert.deepEqual(alerts.filter((alert) => !anchors.has(alert.toLowerCase())), [], 'a "### Name" runbook section for each')
})
