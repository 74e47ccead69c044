// context-offloader: native drop-in replacement for the ContextOffloader plugin of
// @strands-agents/sdk. This is the public entry: it only re-exports. The glue lives in
// lib/ (one module per job; see the README's Layout section); storage, search, previews,
// token counting and session files run in Rust (binding.cjs, crates/).

export { ContextOffloader } from './lib/plugin.js'
export { InMemoryStorage } from './lib/storage/memory.js'
export { FileStorage } from './lib/storage/file.js'
export { S3Storage } from './lib/storage/s3.js'
export { FileSnapshotStorage } from './lib/session/file-storage.js'
export { S3SnapshotStorage } from './lib/session/s3-storage.js'
export { withNativeTokenCounting } from './lib/counting.js'
export { countTokens, countTokensSync, ENCODINGS } from './lib/tokens.js'
