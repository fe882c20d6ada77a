// Not http-link-header: it is CommonJS, which a browser cannot import from dist without a bundler.

/** The target of the `rel="next"` link of an RFC 8288 Link header, if any. */
export function nextLink (header: string | null): string | undefined {
  if (!header) return undefined
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const params = match[2] ?? ''
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params)
    const values = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/)
    if (values.includes('next')) return match[1]
  }
  return undefined
}
