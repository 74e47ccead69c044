// context-offloader/langchain: the LangChain.js adapter (`createAgent` middleware). This
// entry only re-exports (see the README's Layout section).

export { contextOffloaderMiddleware, METADATA_KEY, MIDDLEWARE_NAME } from './lib/adapters/langchain.js'
