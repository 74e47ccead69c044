//! Errors of the token counter.

/// Why a tokenizer could not be provided.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The name is not one of the supported encodings.
    #[error("unknown encoding '{0}': expected 'o200k_base' or 'cl100k_base'")]
    UnknownEncoding(String),
    /// The bundled vocabulary could not be parsed or its pattern compiled.
    #[error("could not load the {encoding} vocabulary: {message}")]
    Load {
        /// Name of the encoding that failed to load.
        encoding: &'static str,
        /// What went wrong.
        message: String,
    },
}
