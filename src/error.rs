//! Conversion of core errors into JavaScript errors with clear messages.

use napi::{Error, Status};

/// Maps any core error to a JavaScript `Error` carrying the error's own message
/// (for example `Reference not found: <ref>` or an I/O failure naming the path).
pub fn to_js_error(err: impl std::fmt::Display) -> Error {
  Error::new(Status::GenericFailure, err.to_string())
}
