// context-offloader/core: the framework-neutral engine. `Offloader` offloads large tool
// results for any agent framework and answers the retrieval tool; the storages and the
// native token counter come with it. No agent framework is loaded from here. This
// entry only re-exports (see the README's Layout section).

export { Offloader } from './lib/offloader.js'
export { RETRIEVAL_TOOL_NAME } from './lib/retrieval-schema.js'
export { InMemoryStorage } from './lib/storage/memory.js'
export { FileStorage } from './lib/storage/file.js'
export { S3Storage } from './lib/storage/s3.js'
export { countTokens, countTokensSync, ENCODINGS } from './lib/tokens.js'
