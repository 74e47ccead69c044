// Strings with an unpaired surrogate have no UTF-8 form: native code reads each one as
// U+FFFD, so two different keys (or directories) would name one value, and the second
// write would replace the first. Our storages refuse such keys, prefixes and paths with
// a clear error instead, and nothing already stored is touched.
import { describe, expect, test } from 'vitest'
import { StorageError } from '@strands-agents/sdk'
import { type Dirent, existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import * as ours from '../index.js'
import { prng, tempDirs } from './helpers/harness.js'

const dir = tempDirs('surrogate-')

/** A lone surrogate: a high one not followed by a low one, or a low one alone. */
function loneSurrogate(next: () => number): string {
  const high = next() < 0.5
  return String.fromCharCode((high ? 0xd800 : 0xdc00) + Math.floor(next() * 0x400))
}

/**
 * Pairs of different keys that are the same once each lone surrogate becomes U+FFFD:
 * a plain stem with one lone surrogate put at the same place, twice, different each time.
 */
function collidingPairs(seed: number, count: number): Array<[string, string]> {
  const { next } = prng(seed)
  const pairs: Array<[string, string]> = []
  while (pairs.length < count) {
    const stem = `dir${Math.floor(next() * 100)}/key-${Math.floor(next() * 1e6).toString(36)}`
    const at = Math.floor(next() * (stem.length + 1))
    const [a, b] = [loneSurrogate(next), loneSurrogate(next)]
    if (a === b) continue
    pairs.push([stem.slice(0, at) + a + stem.slice(at), stem.slice(0, at) + b + stem.slice(at)])
  }
  return pairs
}

const enc = (s: string) => new TextEncoder().encode(s)

/** Every unified-storage operation on a key of `pair`, and what it must not do: make the two keys one. */
async function attack(storage: any, pair: [string, string]) {
  const [a, b] = pair
  // A well-formed key that spells what native code would read: it must stay intact.
  const spelled = a.toWellFormed()
  await storage.write(spelled, enc('kept'))
  for (const key of pair) {
    await expect(storage.write(key, enc(key === a ? 'first' : 'second'))).rejects.toThrow(StorageError)
    await expect(storage.write(key, enc('x'))).rejects.toThrow(/unpaired surrogate/)
    await expect(storage.read(key)).rejects.toThrow(StorageError)
    await expect(storage.delete(key)).rejects.toThrow(StorageError)
    await expect(storage.list(key)).rejects.toThrow(StorageError)
  }
  expect(() => storage.namespace(b)).toThrow(StorageError)
  expect(new TextDecoder().decode((await storage.read(spelled)) ?? new Uint8Array())).toBe('kept')
  expect(await storage.list(spelled.split('/')[0])).toContain(spelled)
  await storage.delete(spelled)
}

describe('keys with an unpaired surrogate are refused, never merged', () => {
  const pairs = collidingPairs(20261127, 24)

  test('the generated pairs differ, but are one key once made well-formed', () => {
    for (const [a, b] of pairs) {
      expect(a).not.toBe(b)
      expect(a.toWellFormed()).toBe(b.toWellFormed())
      expect(a.isWellFormed() || b.isWellFormed()).toBe(false)
    }
  })

  test('InMemoryStorage', async () => {
    const storage = new ours.InMemoryStorage()
    for (const pair of pairs) await attack(storage, pair)
    for (const pair of pairs) await attack(storage.namespace('ns'), pair)
  })

  test('FileStorage, its root and its namespaces', async () => {
    const root = dir()
    const storage = new ours.FileStorage(root)
    for (const pair of pairs) await attack(storage, pair)
    for (const pair of pairs) await attack(storage.namespace('ns/deeper'), pair)
    // Every well-formed key was deleted again and every refused one wrote nothing: no
    // value file is left (only the directories of the deleted keys).
    const files = (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
      .filter((entry) => entry.isFile() && !entry.name.startsWith('.'))
      .map((entry) => join(entry.parentPath, entry.name))
    expect(files).toEqual([])
  })

  test('a refused key leaves what was stored under its well-formed spelling, across a restart', async () => {
    const root = dir()
    const [a] = pairs[0]
    const spelled = a.toWellFormed()
    await new ours.FileStorage(root).write(spelled, enc('before'))
    await expect(new ours.FileStorage(root).write(a, enc('after'))).rejects.toThrow(StorageError)
    const reopened = new ours.FileStorage(root)
    expect(new TextDecoder().decode((await reopened.read(spelled))!)).toBe('before')
  })
})

describe('paths with an unpaired surrogate are refused, naming the option', () => {
  test('FileStorage artifactDir (as a string and as an option) makes no directory', async () => {
    const root = dir()
    for (const lone of ['\uD800', '\uDBFF', '\uDC00', '\uDFFF']) {
      const artifactDir = join(root, `d${lone}x`)
      expect(() => new ours.FileStorage(artifactDir)).toThrow(TypeError)
      expect(() => new ours.FileStorage({ artifactDir })).toThrow(/FileStorage artifactDir must be a well-formed string/)
    }
    expect(readdirSync(root)).toEqual([])
    // A well-formed name with the replacement character itself is a directory like any other.
    await new ours.FileStorage(join(root, 'd\uFFFDx')).store('k', new Uint8Array([1]), 'text/plain')
    expect(existsSync(join(root, 'd\uFFFDx'))).toBe(true)
  })

  test('FileSnapshotStorage baseDir', () => {
    const root = dir()
    expect(() => new ours.FileSnapshotStorage(join(root, 's\uD800'))).toThrow(/FileSnapshotStorage baseDir must be a well-formed string/)
    expect(() => new ours.FileSnapshotStorage({ baseDir: join(root, 's\uDC00') })).toThrow(TypeError)
    expect(readdirSync(root)).toEqual([])
  })

  test('S3Storage and S3SnapshotStorage prefixes', () => {
    const connection = { endpoint: 'http://127.0.0.1:9', region: 'garage', forcePathStyle: true }
    expect(() => new ours.S3Storage('bucket', { ...connection, prefix: 'p\uD800/' })).toThrow(/S3Storage prefix must be a well-formed string/)
    expect(() => new ours.S3SnapshotStorage({ ...connection, bucket: 'bucket', prefix: 'p\uDFFF' })).toThrow(/S3SnapshotStorage prefix must be a well-formed string/)
  })
})
