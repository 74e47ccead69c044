/**
 * The two implementations under comparison: the SDK's vended ContextOffloader
 * and this package's. Each is described by the same three exports plus a label.
 * Loading ours may fail (no native build yet); the harness then reports the
 * reason and runs the SDK side only.
 */
import { readFile } from 'node:fs/promises'
import * as sdkPlugin from '@strands-agents/sdk/vended-plugins/context-offloader'

const packageRoot = new URL('../../', import.meta.url)

/** @typedef {{ side: 'sdk' | 'ours', label: string, version: string, ContextOffloader: any, InMemoryStorage: any, FileStorage: any }} Impl */

async function versionOf(packageJsonUrl) {
  return JSON.parse(await readFile(packageJsonUrl, 'utf8')).version
}

/** The SDK's plugin. */
export async function loadSdk() {
  // The export resolves to <sdk>/dist/src/vended-plugins/context-offloader/index.js.
  const entry = import.meta.resolve('@strands-agents/sdk/vended-plugins/context-offloader')
  const sdkPackageJson = new URL('../../../../package.json', entry)
  return {
    side: 'sdk',
    label: '@strands-agents/sdk',
    version: await versionOf(sdkPackageJson),
    ContextOffloader: sdkPlugin.ContextOffloader,
    InMemoryStorage: sdkPlugin.InMemoryStorage,
    FileStorage: sdkPlugin.FileStorage,
    S3Storage: sdkPlugin.S3Storage,
  }
}

/**
 * This package's plugin, or `{ error }` when it cannot be loaded.
 * @returns {Promise<Impl | { side: 'ours', error: string }>}
 */
export async function loadOurs() {
  try {
    const ours = await import(new URL('index.js', packageRoot).href)
    await smokeTest(ours)
    return {
      side: 'ours',
      label: 'context-offloader',
      version: await versionOf(new URL('package.json', packageRoot)),
      ContextOffloader: ours.ContextOffloader,
      InMemoryStorage: ours.InMemoryStorage,
      FileStorage: ours.FileStorage,
      S3Storage: ours.S3Storage,
      withNativeTokenCounting: ours.withNativeTokenCounting,
    }
  } catch (error) {
    return { side: 'ours', error: error?.message ?? String(error) }
  }
}

/** A store/retrieve round trip, so a stale or partial native build is reported up front. */
async function smokeTest({ InMemoryStorage }) {
  const storage = new InMemoryStorage()
  const reference = await storage.store('smoke', new TextEncoder().encode('ok'), 'text/plain')
  const { content } = await storage.retrieve(reference)
  if (new TextDecoder().decode(content) !== 'ok') throw new Error('native build failed a store/retrieve round trip')
}

/** Loads one side by name (used by child processes). */
export async function loadSide(side) {
  const impl = side === 'sdk' ? await loadSdk() : await loadOurs()
  if (impl.error) throw new Error(impl.error)
  return impl
}
