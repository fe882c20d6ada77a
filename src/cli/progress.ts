/** Where progress is drawn: a terminal (process.stderr), or anything shaped like one. */
export interface ProgressStream { isTTY?: boolean, columns?: number, write(text: string): unknown }

export interface Progress {
  update(done: number, count: number): void
  finish(): void
}

const REDRAW_MS = 100
const NO_PROGRESS: Progress = { update () {}, finish () {} }

/**
 * A one-line progress bar, redrawn at most ten times a second. Only on a terminal: piped or
 * redirected output gets no bar, so logs and scripts see the summary line alone.
 */
export function createProgress (stream: ProgressStream, total: number | undefined, noun: string, now = Date.now): Progress {
  if (!stream.isTTY) return NO_PROGRESS
  let drawnAt = 0
  let drawn = false
  const draw = (done: number, count: number) => {
    const counted = `${count.toLocaleString('en-US')} ${noun}`
    if (!total) { stream.write(`\r${counted}\u001b[K`); return }
    const share = Math.min(1, done / total)
    const width = Math.max(10, Math.min(40, (stream.columns || 80) - counted.length - 10))
    const filled = Math.round(share * width)
    stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${counted}\u001b[K`)
  }
  return {
    update (done, count) {
      const at = now()
      if (at - drawnAt < REDRAW_MS) return
      drawnAt = at
      drawn = true
      draw(done, count)
    },
    finish () {
      // The bar is erased: what stays on the screen is the summary line.
      if (drawn) stream.write('\r\u001b[K')
    }
  }
}
