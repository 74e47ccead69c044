//! Object keys and references, exactly as the SDK's `S3Storage` builds and parses them.

use crate::S3Error;

/// Normalises a key prefix like the SDK: trailing slashes are stripped and one
/// `/` is appended; an empty prefix (or one of only slashes... which the SDK
/// turns into `/`) is kept as the SDK keeps it.
#[must_use]
pub fn normalize_prefix(prefix: &str) -> String {
    if prefix.is_empty() {
        return String::new();
    }
    format!("{}/", prefix.trim_end_matches('/'))
}

/// S3's limit on object keys, in bytes of UTF-8. Longer keys are refused
/// before any request is built (the HTTP client cannot even form the URI of
/// a very long one).
pub const MAX_KEY_BYTES: usize = 1024;

/// Whether `key` is short enough to be an S3 object key.
#[must_use]
pub fn fits_s3(key: &str) -> bool {
    key.len() <= MAX_KEY_BYTES
}

/// The error for a key over [`MAX_KEY_BYTES`].
#[must_use]
pub fn key_too_long(what: &str, key: &str) -> String {
    format!(
        "{what} would be {} bytes long; S3 object keys are at most {MAX_KEY_BYTES} bytes",
        key.len()
    )
}

/// Why `bucket`, `region` or `endpoint` cannot be used, if anything: a
/// bucket is 1 to 255 of `A-Z a-z 0-9 . _ -`, a region 1 to 64 of
/// `A-Z a-z 0-9 _ -`, an endpoint an `http://` or `https://` URL of at most
/// 2,048 bytes without spaces or control characters.
#[must_use]
pub fn connection_problem(
    bucket: &str,
    region: Option<&str>,
    endpoint: Option<&str>,
) -> Option<String> {
    let named = |s: &str, max: usize, extra: &[char]| {
        !s.is_empty()
            && s.len() <= max
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
    };
    if !named(bucket, 255, &['.', '_', '-']) {
        return Some(
            "bucket must be 1 to 255 characters of A-Z, a-z, 0-9, '.', '_' and '-'".to_owned(),
        );
    }
    if region.is_some_and(|r| !named(r, 64, &['_', '-'])) {
        return Some("region must be 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-'".to_owned());
    }
    if let Some(endpoint) = endpoint {
        let scheme = endpoint
            .strip_prefix("https://")
            .or_else(|| endpoint.strip_prefix("http://"));
        let clean = endpoint.len() <= 2048
            && !endpoint
                .chars()
                .any(|c| c.is_whitespace() || c.is_control());
        if !clean || scheme.is_none_or(|rest| rest.is_empty() || rest.starts_with('/')) {
            return Some(
                "endpoint must be an http:// or https:// URL of at most 2048 bytes".to_owned(),
            );
        }
    }
    None
}

/// The object key for a block: `<prefix><ms>_<sequence>_<sanitize_id(key)>`.
#[must_use]
pub fn object_key(prefix: &str, timestamp_ms: u128, sequence: u64, key: &str) -> String {
    format!(
        "{prefix}{timestamp_ms}_{sequence}_{}",
        offload_storage::sanitize_id(key)
    )
}

/// The reference handed back for an object: `s3://<bucket>/<key>`.
#[must_use]
pub fn reference_for(bucket: &str, key: &str) -> String {
    format!("s3://{bucket}/{key}")
}

/// Resolves a reference (`s3://bucket/key` or a raw key) to the object key it
/// names, with the SDK's checks: another bucket is `(bucket mismatch)`, a key
/// outside `prefix`, or anything under it that is not an artifact object
/// directly under it (an artifact-shaped name, see
/// [`offload_storage::is_artifact_name`]), is not found.
///
/// # Errors
///
/// [`S3Error::NotFound`] when the reference is rejected.
pub fn resolve_reference(bucket: &str, prefix: &str, reference: &str) -> Result<String, S3Error> {
    let mut key = reference;
    // The SDK's /^s3:\/\/([^/]+)\/(.+)$/: a non-empty bucket, a slash, a non-empty key.
    // `.` does not match line terminators, so a key containing one is a raw key.
    if let Some(rest) = reference.strip_prefix("s3://") {
        if let Some((ref_bucket, ref_key)) = rest.split_once('/') {
            let key_ok =
                !ref_key.is_empty() && !ref_key.contains(['\n', '\r', '\u{2028}', '\u{2029}']);
            if !ref_bucket.is_empty() && key_ok {
                if ref_bucket != bucket {
                    return Err(S3Error::NotFound {
                        reference: reference.to_owned(),
                        detail: Some("bucket mismatch"),
                    });
                }
                key = ref_key;
            }
        }
    }
    // Only an artifact object directly under the prefix is ever read: never a value of
    // the unified storage, a session snapshot, the manifest, or a Windows-shaped name.
    let artifact = key.strip_prefix(prefix).is_some_and(offload_storage::is_artifact_name);
    if !artifact || !fits_s3(key) {
        return Err(S3Error::not_found(reference));
    }
    Ok(key.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_normalised_like_the_sdk() {
        assert_eq!(normalize_prefix(""), "");
        assert_eq!(normalize_prefix("a"), "a/");
        assert_eq!(normalize_prefix("a/b///"), "a/b/");
        assert_eq!(normalize_prefix("/"), "/");
    }

    #[test]
    fn keys_are_sanitised() {
        assert_eq!(object_key("p/", 17, 3, "../x y"), "p/17_3___x_y");
        assert_eq!(object_key("", 1, 1, "tool_1"), "1_1_tool_1");
    }

    #[test]
    fn references_resolve_to_keys() {
        assert_eq!(resolve_reference("b", "", "s3://b/1_2_k").unwrap(), "1_2_k");
        assert_eq!(resolve_reference("b", "", "17_3_tool.json").unwrap(), "17_3_tool.json");
        assert_eq!(resolve_reference("b", "p/", "s3://b/p/1_1_x").unwrap(), "p/1_1_x");
        assert_eq!(resolve_reference("b", "p/", "p/1_1_x").unwrap(), "p/1_1_x");
    }

    #[test]
    fn only_artifact_objects_directly_under_the_prefix_resolve() {
        // Values of the unified storage, snapshots, the manifest, nested keys, a raw
        // `s3://` string, Windows-shaped and control-character names: all not found.
        for (prefix, reference) in [
            ("", "raw/key"),
            ("", "s3://b/"),
            ("", "s3://b/k/1"),
            ("", "offload-manifest/x/ref_1.json"),
            ("", "1_2_k/nested"),
            ("", "sessions/s1/snapshot.json"),
            ("", "1_2_C:evil"),
            ("", "1_2_a\\b"),
            ("", "1_2_a\u{1}b"),
            ("", "1_2_a\u{85}b"),
            ("", "x_1_k"),
            ("", "1__k"),
            ("p/", "p/1"),
            ("p/", "p/q/1_1_x"),
            ("p/", "s3://b/p/value"),
            ("p/", "1_1_x"),
        ] {
            let err = resolve_reference("b", prefix, reference).unwrap_err();
            assert!(matches!(err, S3Error::NotFound { .. }), "{prefix:?} {reference:?}: {err}");
        }
    }

    #[test]
    fn foreign_buckets_and_keys_outside_the_prefix_are_rejected() {
        let err = resolve_reference("b", "", "s3://other/k").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Reference not found: s3://other/k (bucket mismatch)"
        );
        let err = resolve_reference("b", "p/", "s3://b/q/1").unwrap_err();
        assert_eq!(err.to_string(), "Reference not found: s3://b/q/1");
        let err = resolve_reference("b", "p/", "q/1").unwrap_err();
        assert_eq!(err.to_string(), "Reference not found: q/1");
    }
}
