//! Node.js bindings for the context-offloader core.
//!
//! Thin `#[napi]` wrappers: every function here converts arguments, hands the
//! work to the pure-Rust crates (`offload-search`, `offload-storage`) on the
//! libuv worker pool, and maps their errors to JavaScript `Error`s. Nothing
//! here decides behaviour; the JavaScript glue (`index.js`) and the crates do.
#![deny(clippy::all)]

mod error;
mod search;
mod store;
mod text;

pub use search::*;
pub use store::*;
pub use text::*;
