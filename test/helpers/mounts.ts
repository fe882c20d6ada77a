import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { TestContext } from 'node:test'

/** Runs a command of the system; its stderr becomes the error's message. */
function run (command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
  } catch (error) {
    const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr).trim() : ''
    throw new Error(`${command} ${args.join(' ')}: ${stderr || String(error)}`, { cause: error })
  }
}

/**
 * Mounts a file system of its own for one test, unmounted when it ends. Mounting needs root
 * (CAP_SYS_ADMIN): without it the test cannot run, and it says so loudly; under CI that is a
 * failure, never a skip. Undefined when skipped.
 */
function mountOrSkip (t: TestContext, what: string, mount: (dir: string) => void): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-mount-'))
  try {
    if (process.getuid?.() !== 0) throw new Error(`not root (uid ${process.getuid?.()})`)
    mount(dir)
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    const message = `cannot mount ${what}: ${error instanceof Error ? error.message : String(error)}; run the tests as root, as .ci/run does`
    if (process.env.CI === 'true') assert.fail(message)
    process.stderr.write(`\n*** SKIPPED a storage test: ${message} ***\n\n`)
    t.skip(message)
    return undefined
  }
  // Lazy: the store under test may still hold its files when this runs; the file system goes
  // once they are closed.
  t.after(() => {
    run('umount', ['-l', dir])
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

/** A tmpfs of `size` (as mount takes it: 2m, 512k), to fill up. */
export function mountTmpfs (t: TestContext, size: string): string | undefined {
  return mountOrSkip(t, `a tmpfs of ${size}`, (dir) => run('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]))
}

/**
 * A small ext4 file system on a loop device that turns read-only on its first error, as a disk
 * that fails does, also under files held open for writing (which `mount -o remount,ro`
 * refuses). makeReadOnly() raises such an error.
 */
export function mountFailingExt4 (t: TestContext): { dir: string, makeReadOnly(): void } | undefined {
  const image = join(mkdtempSync(join(tmpdir(), 'petstore-ext4-')), 'disk.img')
  t.after(() => rmSync(join(image, '..'), { recursive: true, force: true }))
  let device = ''
  const dir = mountOrSkip(t, 'an ext4 image on a loop device', (target) => {
    run('truncate', ['-s', '16M', image])
    run('mkfs.ext4', ['-q', '-F', image])
    run('mount', ['-o', 'loop,errors=remount-ro', image, target])
    device = basename(run('findmnt', ['-n', '-o', 'SOURCE', target]).trim())
  })
  if (dir === undefined) return undefined
  return { dir, makeReadOnly: () => writeFileSync(`/sys/fs/ext4/${device}/trigger_fs_error`, 'petstore test: turn read-only\n') }
}

/** Writes zeros to path until the file system is full. */
export function fillUp (path: string): void {
  const chunk = Buffer.alloc(64 * 1024)
  try {
    for (;;) writeFileSync(path, chunk, { flag: 'a' })
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOSPC')) throw error
  }
  // The last blocks: smaller writes fit where a whole chunk did not.
  try {
    for (;;) writeFileSync(path, Buffer.alloc(512), { flag: 'a' })
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOSPC')) throw error
  }
}
