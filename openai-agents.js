// context-offloader/openai-agents: large tool results kept out of an OpenAI Agents SDK
// agent's context. This entry only re-exports (see the README's Layout section).

export { offloadTools, DEFAULT_TOOL_ERROR_TEXT } from './lib/adapters/openai-agents.js'
