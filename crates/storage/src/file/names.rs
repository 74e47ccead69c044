//! Artifact file names: the SDK's `sanitizeId`, extensions and the length
//! limit.

use crate::kv::is_control_character;

/// Largest file name (in bytes) accepted by common file systems.
pub(crate) const MAX_FILENAME_BYTES: usize = 255;

/// Longest extension kept when a name has to be shortened.
const MAX_SHORTENED_EXT_BYTES: usize = 64;

/// Replaces characters that are unsafe in a file name component, exactly as
/// the SDK's `sanitizeId`:
///
/// 1. every `..` (scanning left to right, non-overlapping) becomes `_`;
/// 2. every `/` and `\` becomes `_`;
/// 3. every UTF-16 code unit outside `[A-Za-z0-9_.-]` becomes `_`, so a
///    character outside the Basic Multilingual Plane (an emoji, say) becomes
///    `__`.
///
/// The result is always ASCII.
#[must_use]
pub fn sanitize_id(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '.' && chars.peek() == Some(&'.') {
            chars.next();
            out.push('_');
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
            out.push(c);
        } else {
            // Slashes, backslashes and any other character: one `_` per
            // UTF-16 code unit, as JavaScript's non-unicode regex does.
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
    out
}

/// The extension the SDK appends for `content_type`: `.txt` for
/// `text/plain`, otherwise `.` followed by the text after the last `/`.
///
/// Characters that some platform cannot have in a file name (`\`, `:`,
/// `<>"|?*`, control characters as [`is_control_character`] defines them,
/// C1 included) are replaced by `_`, and so is a trailing `.` or space
/// (Windows drops them); everything else is kept, so names stay identical
/// to the SDK's for every common content type.
pub(crate) fn extension_for(content_type: &str) -> String {
    if content_type == "text/plain" {
        return ".txt".to_owned();
    }
    let subtype = content_type.rsplit('/').next().unwrap_or(content_type);
    let mut ext = String::with_capacity(subtype.len() + 1);
    ext.push('.');
    for c in subtype.chars() {
        if is_unportable_char(c) {
            ext.push('_');
        } else {
            ext.push(c);
        }
    }
    if ext.ends_with(['.', ' ']) {
        if ext.len() > 1 {
            ext.pop();
        }
        ext.push('_');
    }
    ext
}

/// A character some platform does not allow in a file name.
fn is_unportable_char(c: char) -> bool {
    matches!(c, '/' | '\\' | ':' | '<' | '>' | '"' | '|' | '?' | '*') || is_control_character(c)
}

/// Builds the artifact file name
/// `<timestamp_ms>_<counter>_<sanitize_id(key)><extension>`.
///
/// When that would exceed [`MAX_FILENAME_BYTES`], the sanitized key is cut
/// short and followed by `-` and 16 hex digits of a hash of the full key (and
/// an extension longer than 64 bytes is cut to 64 bytes), so names stay
/// distinct for keys that share a long prefix.
pub(crate) fn artifact_filename(
    timestamp_ms: u64,
    counter: u64,
    key: &str,
    content_type: &str,
) -> String {
    let prefix = format!("{timestamp_ms}_{counter}_");
    let sanitized = sanitize_id(key);
    let mut ext = extension_for(content_type);
    if prefix.len() + sanitized.len() + ext.len() <= MAX_FILENAME_BYTES {
        return format!("{prefix}{sanitized}{ext}");
    }
    truncate_at_char_boundary(&mut ext, MAX_SHORTENED_EXT_BYTES);
    let tag = format!("-{:016x}", fnv1a64(key.as_bytes()));
    let budget = MAX_FILENAME_BYTES.saturating_sub(prefix.len() + tag.len() + ext.len());
    let mut short_key = sanitized;
    truncate_at_char_boundary(&mut short_key, budget);
    format!("{prefix}{short_key}{tag}{ext}")
}

/// Whether `name` has the shape of an artifact file name
/// (`<digits>_<digits>_...`, as the SDK and this store name artifacts).
pub(crate) fn has_artifact_shape(name: &str) -> bool {
    !name.contains('/') && crate::names_an_artifact(name)
}

/// Whether `name` may be read as an artifact: artifact-shaped, with no
/// character any platform reads as a separator, a drive or a stream (`/`,
/// `\\`, `:`) and no control character. Everything else (hidden files, the
/// journal, temporaries, values of the key-value API, `C:.env`) is refused
/// as a reference. (Names the SDK wrote with other characters that Windows
/// refuses, such as a trailing `.`, still read where they exist.)
#[must_use]
pub fn is_artifact_name(name: &str) -> bool {
    has_artifact_shape(name) && !name.chars().any(|c| matches!(c, '/' | '\\' | ':') || is_control_character(c))
}

fn truncate_at_char_boundary(s: &mut String, max_bytes: usize) {
    if s.len() <= max_bytes {
        return;
    }
    let mut cut = max_bytes;
    while cut > 0 && !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
}

/// 64-bit FNV-1a; stable across platforms and releases.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_matches_sdk_examples() {
        assert_eq!(sanitize_id("tool-123_abc.def"), "tool-123_abc.def");
        assert_eq!(sanitize_id("../../etc/passwd"), "____etc_passwd");
        assert_eq!(sanitize_id("..."), "_.");
        assert_eq!(sanitize_id("...."), "__");
        assert_eq!(sanitize_id("a\\b/c"), "a_b_c");
        assert_eq!(sanitize_id("héllo wörld"), "h_llo_w_rld");
        assert_eq!(sanitize_id("x😀y"), "x__y");
        assert_eq!(sanitize_id("日本"), "__");
        assert_eq!(sanitize_id(""), "");
        assert_eq!(sanitize_id("a\0b"), "a_b");
        assert_eq!(sanitize_id("._.."), ".__");
        assert_eq!(sanitize_id("a..b...c"), "a_b_.c");
    }

    #[test]
    fn extensions() {
        assert_eq!(extension_for("text/plain"), ".txt");
        assert_eq!(extension_for("application/json"), ".json");
        assert_eq!(extension_for("image/svg+xml"), ".svg+xml");
        assert_eq!(
            extension_for("text/plain; charset=utf-8"),
            ".plain; charset=utf-8"
        );
        assert_eq!(extension_for("weird"), ".weird");
        assert_eq!(extension_for(""), "._");
        assert_eq!(extension_for("a/b\\c\0d\ne"), ".b_c_d_e");
        assert_eq!(extension_for("x/a:b<c>d|e?f*g\"h."), ".a_b_c_d_e_f_g_h_");
        // C1 control characters too: the name must be one `is_artifact_name` accepts.
        assert_eq!(extension_for("application/pdf\u{85}"), ".pdf_");
        assert_eq!(extension_for("x/a\u{9f}b\u{7f}c\u{a0}d"), ".a_b_c\u{a0}d");
        assert!(is_artifact_name(&artifact_filename(1, 1, "k", "application/pdf\u{85}")));
    }

    #[test]
    fn short_names_are_unchanged() {
        assert_eq!(
            artifact_filename(1700000000000, 3, "tool/1", "text/plain"),
            "1700000000000_3_tool_1.txt"
        );
    }

    #[test]
    fn long_names_are_shortened_and_distinct() {
        let a = format!("{}A", "k".repeat(5000));
        let b = format!("{}B", "k".repeat(5000));
        let na = artifact_filename(1700000000000, 1, &a, "application/json");
        let nb = artifact_filename(1700000000000, 1, &b, "application/json");
        assert!(na.len() <= MAX_FILENAME_BYTES);
        assert!(na.ends_with(".json"));
        assert_ne!(na, nb);
        let long_ext = format!("x/{}", "é".repeat(300));
        let nc = artifact_filename(1, 1, &a, &long_ext);
        assert!(nc.len() <= MAX_FILENAME_BYTES);
        assert!(std::str::from_utf8(nc.as_bytes()).is_ok());
    }

    #[test]
    fn artifact_name_rules() {
        assert!(is_artifact_name("1_1_a.txt"));
        assert!(is_artifact_name("1700000000000_12_tool-1_0.svg+xml"));
        for name in ["C:.env", "1_1_a:b", "1_1_a\\b", "1_1_a\nb", "1_1", "a_1_b", "_1_b", "con"] {
            assert!(!is_artifact_name(name), "{name}");
        }
        assert!(!is_artifact_name(""));
        assert!(!is_artifact_name(".metadata.json"));
        assert!(!is_artifact_name(".."));
        assert!(!is_artifact_name("a/b"));
        assert!(!is_artifact_name("a\0b"));
    }
}
