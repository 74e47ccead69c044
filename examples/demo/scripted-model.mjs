// An offline model for demos and tests: each turn is a function of the conversation
// that returns either a tool call or a final text answer. No network, no API key.
import { Model } from '@strands-agents/sdk'

/**
 * A `Model` that plays back a script.
 * Each script step receives the messages the agent sent and returns
 * `{ toolUse: { name, input } }` or `{ text }`.
 */
export class ScriptedModel extends Model {
  #steps
  #config = { modelId: 'scripted' }
  /** Every message list the agent sent, one entry per turn. */
  seen = []

  /** @param {Array<(messages: import('@strands-agents/sdk').Message[]) => ({ toolUse: { name: string, input: unknown } } | { text: string })>} steps */
  constructor(steps) {
    super()
    this.#steps = [...steps]
  }

  updateConfig(config) {
    this.#config = { ...this.#config, ...config }
  }

  getConfig() {
    return this.#config
  }

  async *stream(messages) {
    this.seen.push([...messages])
    const step = this.#steps.shift()
    const reply = step ? step(messages) : { text: 'Done.' }
    yield { type: 'modelMessageStartEvent', role: 'assistant' }
    if ('toolUse' in reply) {
      const toolUseId = `call_${this.seen.length}`
      yield {
        type: 'modelContentBlockStartEvent',
        start: { type: 'toolUseStart', name: reply.toolUse.name, toolUseId },
      }
      yield {
        type: 'modelContentBlockDeltaEvent',
        delta: { type: 'toolUseInputDelta', input: JSON.stringify(reply.toolUse.input) },
      }
      yield { type: 'modelContentBlockStopEvent' }
      yield { type: 'modelMetadataEvent', usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
      yield { type: 'modelMessageStopEvent', stopReason: 'toolUse' }
      return
    }
    yield { type: 'modelContentBlockStartEvent' }
    yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: reply.text } }
    yield { type: 'modelContentBlockStopEvent' }
    yield { type: 'modelMetadataEvent', usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
    yield { type: 'modelMessageStopEvent', stopReason: 'endTurn' }
  }
}

/** The text of the last tool result in `messages` (what the model was shown). */
export function lastToolResultText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    for (const block of messages[i].content) {
      if (block.type === 'toolResultBlock') {
        return block.content
          .filter((c) => c.type === 'textBlock')
          .map((c) => c.text)
          .join('\n')
      }
    }
  }
  return ''
}
