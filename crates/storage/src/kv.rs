//! The SDK's unified `Storage` interface (`@strands-agents/sdk/storage`):
//! bytes under `/`-separated string keys, next to the blob API.
//!
//! Keys and prefixes are normalised exactly as the SDK's `normalizeKey` and
//! `normalizePrefix` do, with the same error messages, so every backend
//! accepts and rejects the same keys as the SDK's shipped storages.

use std::cmp::Ordering;

use bytes::Bytes;

use crate::StorageError;

/// A key-value backend with the semantics of the SDK's unified `Storage`.
///
/// Keys are normalised with [`normalize_key`], list prefixes with
/// [`normalize_prefix`]; listings are sorted as JavaScript's
/// `Array.prototype.sort` sorts strings (by UTF-16 code units).
pub trait KeyValueStore: Send + Sync {
    /// Stores `data` under `key`, replacing any existing value.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a rejected key; backend errors
    /// otherwise.
    fn write(&self, key: &str, data: Bytes) -> Result<(), StorageError>;

    /// The value stored under `key`, or `None` when there is none.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a rejected key; backend errors
    /// other than a missing key.
    fn read(&self, key: &str) -> Result<Option<Bytes>, StorageError>;

    /// Removes the value under `key`; returns whether one existed. A missing
    /// key is not an error.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a rejected key; backend errors.
    fn delete(&self, key: &str) -> Result<bool, StorageError>;

    /// Every key starting with the normalised `prefix` (full keys), sorted.
    /// An empty prefix lists every key.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a rejected prefix; backend errors.
    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError>;
}

/// The SDK's `normalizeKey`: collapses runs of `/`, strips leading and
/// trailing `/`, rejects backslashes, empty keys and `..` segments.
///
/// # Errors
///
/// [`StorageError::InvalidKey`] with the SDK's message.
pub fn normalize_key(key: &str) -> Result<String, StorageError> {
    if key.contains('\\') {
        return Err(StorageError::InvalidKey(format!(
            "Invalid storage key '{key}': backslashes are not allowed"
        )));
    }
    let segments: Vec<&str> = key.split('/').filter(|s| !s.is_empty()).collect();
    if segments.is_empty() {
        return Err(StorageError::InvalidKey(
            "Storage key must not be empty".to_owned(),
        ));
    }
    if segments.contains(&"..") {
        return Err(StorageError::InvalidKey(format!(
            "Invalid storage key '{key}': '..' path segments are not allowed"
        )));
    }
    Ok(segments.join("/"))
}

/// The SDK's `normalizePrefix`: like [`normalize_key`], but an empty prefix
/// is valid and a trailing `/` is kept (so `a/` does not match `ab`).
///
/// # Errors
///
/// [`StorageError::InvalidKey`] with the SDK's message.
pub fn normalize_prefix(prefix: &str) -> Result<String, StorageError> {
    if prefix.contains('\\') {
        return Err(StorageError::InvalidKey(format!(
            "Invalid storage prefix '{prefix}': backslashes are not allowed"
        )));
    }
    let segments: Vec<&str> = prefix.split('/').filter(|s| !s.is_empty()).collect();
    if segments.contains(&"..") {
        return Err(StorageError::InvalidKey(format!(
            "Invalid storage prefix '{prefix}': '..' path segments are not allowed"
        )));
    }
    let joined = segments.join("/");
    if prefix.ends_with('/') && !joined.is_empty() {
        Ok(joined + "/")
    } else {
        Ok(joined)
    }
}

/// JavaScript's default string order (UTF-16 code units), which differs from
/// Rust's byte order for characters above U+FFFF.
pub fn compare_js(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Sorts keys in JavaScript's default order.
pub fn sort_js(keys: &mut [String]) {
    keys.sort_unstable_by(|a, b| compare_js(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Result<String, String> {
        normalize_key(k).map_err(|e| e.to_string())
    }

    fn prefix(p: &str) -> Result<String, String> {
        normalize_prefix(p).map_err(|e| e.to_string())
    }

    #[test]
    fn keys_are_normalised_as_the_sdk_does() {
        assert_eq!(key("a/b").as_deref(), Ok("a/b"));
        assert_eq!(key("//a///b//").as_deref(), Ok("a/b"));
        assert_eq!(key("a/./b").as_deref(), Ok("a/./b"));
        assert_eq!(key("...").as_deref(), Ok("..."));
        assert_eq!(key("a/..b").as_deref(), Ok("a/..b"));
        assert_eq!(key("ключ/😀").as_deref(), Ok("ключ/😀"));
    }

    #[test]
    fn keys_are_rejected_with_the_sdk_messages() {
        assert_eq!(key(""), Err("Storage key must not be empty".to_owned()));
        assert_eq!(key("///"), Err("Storage key must not be empty".to_owned()));
        assert_eq!(
            key("a/../b"),
            Err("Invalid storage key 'a/../b': '..' path segments are not allowed".to_owned())
        );
        assert_eq!(
            key("a\\b"),
            Err("Invalid storage key 'a\\b': backslashes are not allowed".to_owned())
        );
        // Backslashes are checked before emptiness, as in the SDK.
        assert_eq!(
            key("\\"),
            Err("Invalid storage key '\\': backslashes are not allowed".to_owned())
        );
    }

    #[test]
    fn prefixes_are_normalised_as_the_sdk_does() {
        assert_eq!(prefix("").as_deref(), Ok(""));
        assert_eq!(prefix("/").as_deref(), Ok(""));
        assert_eq!(prefix("a").as_deref(), Ok("a"));
        assert_eq!(prefix("/a//b/").as_deref(), Ok("a/b/"));
        assert_eq!(prefix("a//").as_deref(), Ok("a/"));
        assert_eq!(
            prefix("../x"),
            Err("Invalid storage prefix '../x': '..' path segments are not allowed".to_owned())
        );
        assert_eq!(
            prefix("x\\"),
            Err("Invalid storage prefix 'x\\': backslashes are not allowed".to_owned())
        );
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        let mut keys = vec![
            "\u{FF61}".to_owned(),
            "😀".to_owned(),
            "b".to_owned(),
            "B".to_owned(),
        ];
        sort_js(&mut keys);
        // U+1F600 is the surrogate pair D83D DE00, which sorts before U+FF61.
        assert_eq!(keys, ["B", "b", "😀", "\u{FF61}"]);
    }
}
