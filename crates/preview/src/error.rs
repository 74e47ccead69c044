//! Errors of the public API.

/// Why a value could not be turned into a preview setting.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PreviewError {
    /// A preview mode name other than `head`, `headTail` or `structure`.
    #[error("unknown preview mode '{0}': expected 'head', 'headTail' or 'structure'")]
    UnknownMode(String),
    /// A head share that is not a finite number from 0 to 1.
    #[error("invalid head share {0}: expected a number from 0 to 1 (the head's share of a headTail preview)")]
    InvalidHeadShare(f64),
}
