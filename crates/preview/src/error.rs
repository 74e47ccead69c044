//! Errors of the public API.

/// Why a value could not be turned into a preview setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PreviewError {
    /// A preview mode name other than `head`, `headTail` or `structure`.
    #[error("unknown preview mode '{0}': expected 'head', 'headTail' or 'structure'")]
    UnknownMode(String),
}
