// context-offloader/ai: the Vercel AI SDK adapter (`ai` 6 and 7). This entry only
// re-exports (see the README's Layout section).

export { offloadTools } from './lib/adapters/ai.js'
