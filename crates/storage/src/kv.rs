//! The SDK's unified `Storage` interface (`@strands-agents/sdk/storage`):
//! bytes under `/`-separated string keys, next to the blob API.
//!
//! Keys and prefixes are normalised as the SDK's `normalizeKey` and
//! `normalizePrefix` do, with the same error messages, and further checked so
//! that every key names the same file on every platform (a store can move
//! between machines, and no key can reach outside the store on Windows):
//!
//! * `.` segments are resolved (dropped), as a file system resolves them;
//! * segments that some platform reads differently are rejected: `:` (a
//!   drive or stream separator on Windows), `<>"|?*`, control characters, a
//!   trailing `.` or space (Windows drops them), and Windows device names
//!   (`CON`, `NUL`, `COM1`, ... in any case, with or without an extension);
//! * segments holding the SDK's temporary-file marker (`.__strands_tmp`),
//!   which listings skip, are rejected.
//!
//! Every backend (memory, files, S3) takes keys through [`normalize_key`], so
//! they all accept and reject the same keys.

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

/// The SDK's `normalizeKey` (collapses runs of `/`, strips leading and
/// trailing `/`, rejects backslashes, empty keys and `..` segments, with its
/// messages), with `.` segments resolved and every segment checked by
/// [`segment_problem`].
///
/// # Errors
///
/// [`StorageError::InvalidKey`]: the SDK's message where the SDK rejects the
/// key, else `Invalid storage key '<key>': <why>`.
pub fn normalize_key(key: &str) -> Result<String, StorageError> {
    if key.contains('\\') {
        return Err(StorageError::InvalidKey(format!(
            "Invalid storage key '{key}': backslashes are not allowed"
        )));
    }
    let segments: Vec<&str> = key.split('/').filter(|s| !s.is_empty()).collect();
    if segments.contains(&"..") {
        return Err(StorageError::InvalidKey(format!(
            "Invalid storage key '{key}': '..' path segments are not allowed"
        )));
    }
    let segments: Vec<&str> = segments.into_iter().filter(|s| *s != ".").collect();
    if segments.is_empty() {
        return Err(StorageError::InvalidKey(
            "Storage key must not be empty".to_owned(),
        ));
    }
    if let Some(problem) = segments.iter().find_map(|s| segment_problem(s)) {
        return Err(StorageError::InvalidKey(format!("Invalid storage key '{key}': {problem}")));
    }
    Ok(segments.join("/"))
}

/// The SDK's `normalizePrefix`: like [`normalize_key`], but an empty prefix
/// is valid and a trailing `/` is kept (so `a/` does not match `ab`). The
/// last segment of a prefix without a trailing `/` may be the start of a
/// name, so only its characters are checked there.
///
/// # Errors
///
/// [`StorageError::InvalidKey`]: the SDK's message where the SDK rejects the
/// prefix, else `Invalid storage prefix '<prefix>': <why>`.
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
    let complete = prefix.ends_with('/');
    // A last segment without a trailing `/` is the start of a name (`x/.`
    // lists `x/.hidden`), not a `.` segment to resolve.
    let partial = if complete { None } else { segments.last().copied() };
    let last = segments.len().saturating_sub(1);
    let segments: Vec<&str> = segments
        .into_iter()
        .enumerate()
        .filter(|&(i, s)| s != "." || (i == last && partial.is_some()))
        .map(|(_, s)| s)
        .collect();
    let problem = segments.iter().find_map(|s| match Some(*s) == partial {
        true => character_problem(s),
        false => segment_problem(s),
    });
    if let Some(problem) = problem {
        return Err(StorageError::InvalidKey(format!("Invalid storage prefix '{prefix}': {problem}")));
    }
    let joined = segments.join("/");
    if complete && !joined.is_empty() {
        Ok(joined + "/")
    } else {
        Ok(joined)
    }
}

/// Whether the first segment of a normalised key has the shape of an
/// artifact file name (`<digits>_<digits>_...`): in a store that keeps its
/// offloaded artifacts next to its values (a directory, an S3 prefix), such
/// a key could name an artifact, so the key-value API refuses it and its
/// listings skip it.
#[must_use]
pub fn names_an_artifact(key: &str) -> bool {
    let first = key.split('/').next().unwrap_or(key);
    let mut parts = first.splitn(3, '_');
    let numeric =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    numeric(parts.next()) && numeric(parts.next()) && parts.next().is_some()
}

/// The error for a key refused by [`names_an_artifact`].
#[must_use]
pub fn artifact_key_error(key: &str) -> StorageError {
    StorageError::InvalidKey(format!("Invalid storage key '{key}': reserved for offloaded artifacts"))
}

/// The SDK's marker of temporary files, which listings skip.
pub(crate) const TEMP_MARKER: &str = ".__strands_tmp";

/// Why `segment` (one component of a key, neither `.` nor `..`) cannot be
/// used as a file name on every platform, or `None` when it can.
#[must_use]
pub fn segment_problem(segment: &str) -> Option<&'static str> {
    if let Some(problem) = character_problem(segment) {
        return Some(problem);
    }
    if segment.ends_with(['.', ' ']) {
        return Some("path segments must not end with '.' or ' ' (Windows drops them)");
    }
    if is_windows_device_name(segment) {
        return Some("CON, PRN, AUX, NUL, COM0-9 and LPT0-9 are device names on Windows");
    }
    if segment.to_ascii_lowercase().contains(TEMP_MARKER) {
        return Some("'.__strands_tmp' marks temporary files");
    }
    None
}

/// Whether `c` is a control character: C0 (U+0000 to U+001F), DEL (U+007F)
/// or C1 (U+0080 to U+009F), Unicode's general category `Cc`. The one
/// definition used everywhere in this crate: artifact file names made from
/// content types, names accepted as artifact references, and segments of
/// unified keys.
#[must_use]
pub fn is_control_character(c: char) -> bool {
    c.is_control()
}

/// Characters no file name on some platform may hold.
fn character_problem(segment: &str) -> Option<&'static str> {
    for c in segment.chars() {
        match c {
            ':' => return Some("':' is not allowed (a drive or stream separator on Windows)"),
            '<' | '>' | '"' | '|' | '?' | '*' => {
                return Some("'<', '>', '\"', '|', '?' and '*' are not allowed (invalid in Windows file names)")
            }
            c if is_control_character(c) => return Some("control characters are not allowed"),
            _ => {}
        }
    }
    None
}

/// Whether Windows reads `name` as a device: `CON`, `PRN`, `AUX`, `NUL`,
/// `COM0`-`COM9`, `LPT0`-`LPT9` (also with superscript digits), in any
/// case, alone or before an extension (`nul.txt`, `Com1.tar.gz`).
#[must_use]
pub fn is_windows_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    if matches!(upper.as_str(), "CON" | "PRN" | "AUX" | "NUL") {
        return true;
    }
    let Some(rest) = upper.strip_prefix("COM").or_else(|| upper.strip_prefix("LPT")) else {
        return false;
    };
    let mut digits = rest.chars();
    matches!((digits.next(), digits.next()), (Some('0'..='9' | '¹' | '²' | '³'), None))
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
        // `.` segments are resolved (the SDK keeps them; a file system resolves them).
        assert_eq!(key("a/./b").as_deref(), Ok("a/b"));
        assert_eq!(key("./a/.").as_deref(), Ok("a"));
        assert_eq!(key("./."), Err("Storage key must not be empty".to_owned()));
        // Windows drops trailing dots: `...` would name the directory itself.
        assert!(key("...").is_err());
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
    fn keys_that_some_platform_reads_differently_are_rejected() {
        for bad in [
            "C:", "C:.env", "C:/Users/x", "a/b:c", "x:$DATA", "con", "CON", "Nul.txt", "com1", "LPT9.tar.gz",
            "a/aux", "com¹", "CON .txt", "a.", "a ", "a/b./c", "a<b", "a>b", "a\"b", "a|b", "a?b", "a*b",
            "a\u{0}b", "a\u{1f}b", "a\u{7f}b", "a\u{85}b", "a\u{9f}", "x.__strands_tmp_1", "X.__STRANDS_TMP_abc",
        ] {
            let err = key(bad).unwrap_err();
            assert!(err.starts_with(&format!("Invalid storage key '{bad}': ")), "{bad}: {err}");
        }
        for good in ["console", "com10", "lpt", "a.b", ".hidden", "con_x", "nulls", "x/..y/z", "a\u{a0}b"] {
            assert!(key(good).is_ok(), "{good}");
        }
        // A prefix may end in the start of a name that is not a device.
        assert_eq!(prefix("co").as_deref(), Ok("co"));
        assert_eq!(prefix("con").as_deref(), Ok("con"));
        assert!(prefix("con/").is_err());
        assert!(prefix("a:").is_err());
        assert_eq!(prefix("./").as_deref(), Ok(""));
        assert_eq!(prefix("a/./").as_deref(), Ok("a/"));
        assert_eq!(prefix("x/.").as_deref(), Ok("x/."));
        assert_eq!(prefix("./x/./.h").as_deref(), Ok("x/.h"));
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
