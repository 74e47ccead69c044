//! Following the continuation tokens of `ListObjectsV2`, safely.

use std::collections::HashSet;

/// Why a listing could not go on to its next page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PagingError {
    /// The server gave a token it had given before: following it would list forever.
    #[error("the server repeated a continuation token")]
    Repeated,
    /// The server said the page was truncated but gave no token.
    #[error("S3 returned truncated response without continuation token")]
    Missing,
}

/// The continuation tokens of one listing.
#[derive(Debug, Default)]
pub(crate) struct Continuation {
    seen: HashSet<String>,
}

impl Continuation {
    /// The token of the next page, or `None` when the listing is complete
    /// (`truncated` and `token` as the page reported them).
    pub(crate) fn next(
        &mut self,
        truncated: Option<bool>,
        token: Option<&str>,
    ) -> Result<Option<String>, PagingError> {
        if truncated != Some(true) {
            return Ok(None);
        }
        let token = token.ok_or(PagingError::Missing)?;
        if !self.seen.insert(token.to_owned()) {
            return Err(PagingError::Repeated);
        }
        Ok(Some(token.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_or_missing_token_stops_the_listing() {
        let mut pages = Continuation::default();
        assert_eq!(pages.next(Some(true), Some("a")), Ok(Some("a".to_owned())));
        assert_eq!(pages.next(Some(true), Some("b")), Ok(Some("b".to_owned())));
        assert_eq!(
            pages.next(Some(true), Some("a")),
            Err(PagingError::Repeated)
        );
        assert_eq!(pages.next(Some(true), None), Err(PagingError::Missing));
        assert_eq!(pages.next(Some(false), Some("c")), Ok(None));
        assert_eq!(pages.next(None, None), Ok(None));
    }
}
