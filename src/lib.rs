//! Node.js bindings for the context-offloader core.
//!
//! Thin `#[napi]` wrappers: every function here converts arguments, hands the
//! work to the pure-Rust crates (`crates/`) on the libuv worker pool (through
//! one generic task, `task.rs`) or napi's Tokio runtime (S3), and maps their
//! errors to JavaScript `Error`s. Nothing here decides behaviour; the
//! JavaScript glue (`lib/`) and the crates do.
#![deny(clippy::all)]

/// Large tool results live in native memory for the agent's lifetime; mimalloc
/// returns freed blocks to the system instead of growing glibc's heap thresholds,
/// so resident memory tracks what is actually stored.
#[global_allocator]
static ALLOCATOR: mimalloc_safe::MiMalloc = mimalloc_safe::MiMalloc;

mod allocator;
mod answers;
mod drops;
mod error;
mod held;
mod kv;
mod lifecycle;
mod loop_turns;
mod offload;
mod pages;
mod s3;
mod s3_snapshot;
mod search;
mod search_cache;
mod snapshot;
mod store;
mod task;
mod text;
mod tokens;
mod utf8;

pub use allocator::*;
pub use answers::*;
pub use kv::*;
pub use loop_turns::*;
pub use offload::*;
pub use pages::*;
pub use s3::*;
pub use search::*;
pub use search_cache::*;
pub use snapshot::*;
pub use store::*;
pub use text::*;
pub use tokens::*;
