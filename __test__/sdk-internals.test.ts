// What lib/sdk.js takes from @strands-agents/sdk beyond its public exports resolves to
// the SDK's own objects in the installed version (not to the fallbacks), and that
// version is the one lib/sdk.js was checked against: a newer SDK fails here first.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { TextBlock } from '@strands-agents/sdk'
import * as sdk from '../lib/sdk.js'

const sdkEntry = import.meta.resolve('@strands-agents/sdk')

/** The installed SDK's package.json (two levels above its entry, `dist/src/index.js`). */
function installedSdk(): { name: string; version: string } {
  return JSON.parse(readFileSync(new URL('../../package.json', sdkEntry), 'utf8'))
}

describe('SDK internals (lib/sdk.js)', () => {
  it('were checked against the installed SDK version', () => {
    const installed = installedSdk()
    expect(installed.name).toBe('@strands-agents/sdk')
    expect(installed.version).toBe(sdk.SDK_VERSION_CHECKED)
  })

  it("SessionError is the SDK's own class", async () => {
    const errors = await import(new URL('./errors.js', sdkEntry).href)
    expect(sdk.SessionError).toBe(errors.SessionError)
  })

  it("the logger forwards to the SDK's logger", async () => {
    const logging = await import(new URL('./logging/logger.js', sdkEntry).href)
    const seen: unknown[][] = []
    const original = logging.logger.warn
    logging.logger.warn = (...args: unknown[]) => seen.push(args)
    try {
      sdk.logger.warn('probe', 1)
    } finally {
      logging.logger.warn = original
    }
    expect(seen).toEqual([['probe', 1]])
  })

  it('a delegating AgentAsTool is recognised by class, anything else is not', async () => {
    const { AgentAsTool } = await import(new URL('./agent/agent-as-tool.js', sdkEntry).href)
    const delegating = Object.create(AgentAsTool.prototype, { delegate: { value: true } })
    expect(sdk.isDelegatingAgentTool(delegating)).toBe(true)
    expect(sdk.isDelegatingAgentTool(Object.create(AgentAsTool.prototype, { delegate: { value: false } }))).toBe(false)
    // A class of the same name that is not the SDK's is not taken for it.
    const LookAlike = { AgentAsTool: class { delegate = true } }.AgentAsTool
    expect(LookAlike.name).toBe('AgentAsTool')
    expect(sdk.isDelegatingAgentTool(new LookAlike())).toBe(false)
    expect(sdk.isDelegatingAgentTool(undefined)).toBe(false)
  })

  it("the unified-storage symbols are the SDK's global ones", () => {
    expect(sdk.NAMESPACED).toBe(Symbol.for('strands.storage.namespaced'))
    expect(sdk.EPHEMERAL).toBe(Symbol.for('strands.storage.ephemeral'))
  })

  it("framing round-trips and matches the SDK plugin's layout byte for byte", () => {
    const content = new TextEncoder().encode(new TextBlock('héllo').text)
    const frame = sdk.frameContent(content, 'text/plain')
    expect([...frame.subarray(0, 2)]).toEqual([0, 10])
    expect(new TextDecoder().decode(frame.subarray(2, 12))).toBe('text/plain')
    const back = sdk.unframeContent(frame)
    expect(back.contentType).toBe('text/plain')
    expect([...back.content]).toEqual([...content])
  })
})
