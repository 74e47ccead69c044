// Every example under examples/ runs offline, as the README shows it (`node examples/<name>/main.mjs`),
// exits 0, and shows the model working with an offloaded result: the preview's guidance
// or an answer of retrieve_offloaded_content.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, 'examples', entry.name, 'main.mjs')))
  .map((entry) => entry.name)

describe('examples', () => {
  test('there is one for the Strands plugin and one for the core', () => {
    expect(examples).toEqual(expect.arrayContaining(['demo', 'core']))
  })

  test.each(examples)('examples/%s/main.mjs runs offline and exits 0', (name) => {
    const env = { ...process.env }
    for (const key of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) delete env[key]
    const run = spawnSync(process.execPath, [join('examples', name, 'main.mjs')], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 })
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0)
    expect(run.stdout).toMatch(/retrieve_offloaded_content/)
  }, 150_000)
})
