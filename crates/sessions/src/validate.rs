//! The SDK's checks of session ids, scope ids, scopes and snapshot ids
//! (`session/validation.js`), with the same error messages. An identifier
//! that passes can never name anything outside its parent directory.

use crate::SnapshotError;

/// Accepts `^[a-z0-9_-]+$` (session ids, scope ids and snapshot ids).
///
/// # Errors
///
/// [`SnapshotError::Invalid`] with the SDK's message otherwise.
pub fn identifier(id: &str) -> Result<&str, SnapshotError> {
    let ok = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(id)
    } else {
        Err(SnapshotError::Invalid(format!(
            "Identifier '{id}' can only contain lowercase letters, numbers, hyphens, and underscores"
        )))
    }
}

/// Accepts a UUID v7 in either case, as the SDK's `validateUuidV7`.
///
/// # Errors
///
/// [`SnapshotError::Invalid`] with the SDK's message otherwise.
pub fn uuid_v7(id: &str) -> Result<&str, SnapshotError> {
    let b = id.as_bytes();
    let ok = b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            14 => c == b'7',
            19 => matches!(c, b'8' | b'9' | b'a' | b'b' | b'A' | b'B'),
            _ => c.is_ascii_hexdigit(),
        });
    if ok {
        Ok(id)
    } else {
        Err(SnapshotError::Invalid(format!(
            "'{id}' is not a valid UUID v7 snapshot ID"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        for good in ["a", "session-1", "x_y", "0"] {
            assert!(identifier(good).is_ok(), "{good}");
        }
        for bad in ["", "A", "a/b", "..", ".", "a b", "é", "a\0", "a.b"] {
            assert!(identifier(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            identifier("../x").unwrap_err().to_string(),
            "Identifier '../x' can only contain lowercase letters, numbers, hyphens, and underscores"
        );
    }

    #[test]
    fn uuids() {
        assert!(uuid_v7("01890a5d-ac96-774b-bcce-b302099a8057").is_ok());
        assert!(uuid_v7("01890A5D-AC96-774B-BCCE-B302099A8057").is_ok());
        assert!(uuid_v7("01890a5d-ac96-474b-bcce-b302099a8057").is_err());
        assert!(uuid_v7("01890a5d-ac96-774b-ccce-b302099a8057").is_err());
        assert_eq!(
            uuid_v7("nope").unwrap_err().to_string(),
            "'nope' is not a valid UUID v7 snapshot ID"
        );
    }
}
