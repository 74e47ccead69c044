//! Lexical path handling with Node's POSIX `path` semantics, and the mapping
//! from a caller-supplied reference to an artifact file name.
//!
//! Nothing here touches the file system: a reference is accepted only when
//! its directory part lexically denotes the artifact directory, and the file
//! that is eventually opened is always `<artifact dir>/<file name>`.

use super::names::is_artifact_name;

/// Splits `path` into normalized segments, resolving `.` and `..`. Leading
/// `..` segments are kept only when `allow_above_root` is set (relative
/// paths), exactly as Node's `normalizeString`.
fn normalized_segments(path: &str, allow_above_root: bool) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|last| *last != "..") {
                    out.pop();
                } else if allow_above_root {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Node's POSIX `path.normalize`.
pub(crate) fn normalize(path: &str) -> String {
    if path.is_empty() {
        return ".".to_owned();
    }
    let absolute = path.starts_with('/');
    let trailing = path.ends_with('/');
    let body = normalized_segments(path, !absolute).join("/");
    if body.is_empty() {
        return match (absolute, trailing) {
            (true, _) => "/".to_owned(),
            (false, true) => "./".to_owned(),
            (false, false) => ".".to_owned(),
        };
    }
    let mut out = String::with_capacity(body.len() + 2);
    if absolute {
        out.push('/');
    }
    out.push_str(&body);
    if trailing {
        out.push('/');
    }
    out
}

/// Node's POSIX `path.join(dir, name)`.
pub(crate) fn join(dir: &str, name: &str) -> String {
    let joined = match (dir.is_empty(), name.is_empty()) {
        (true, true) => return ".".to_owned(),
        (true, false) => name.to_owned(),
        (false, true) => dir.to_owned(),
        (false, false) => format!("{dir}/{name}"),
    };
    normalize(&joined)
}

/// Node's POSIX `path.resolve(...parts)` with `cwd` standing in for
/// `process.cwd()`. Returns `None` when the result would depend on an unknown
/// working directory.
fn resolve(cwd: Option<&str>, parts: &[&str]) -> Option<String> {
    let mut joined = String::new();
    let mut absolute = false;
    for part in parts.iter().rev() {
        if part.is_empty() {
            continue;
        }
        joined = if joined.is_empty() {
            (*part).to_owned()
        } else {
            format!("{part}/{joined}")
        };
        if part.starts_with('/') {
            absolute = true;
            break;
        }
    }
    if !absolute {
        let cwd = cwd.filter(|c| c.starts_with('/'))?;
        joined = if joined.is_empty() {
            cwd.to_owned()
        } else {
            format!("{cwd}/{joined}")
        };
    }
    Some(format!(
        "/{}",
        normalized_segments(&joined, false).join("/")
    ))
}

/// Normalized form of a directory path without a trailing separator, used to
/// compare two spellings of the same directory.
fn canonical_dir(dir: &str) -> String {
    let normalized = normalize(dir);
    if normalized.len() > 1 {
        normalized.trim_end_matches('/').to_owned()
    } else {
        normalized
    }
}

/// Maps `reference` to the name of a file directly inside `artifact_dir`, or
/// `None` when the reference must be rejected.
///
/// Accepted: a bare file name, or `<dir>/<file name>` where `<dir>` denotes
/// the artifact directory lexically, relative to `cwd`, or relative to the
/// artifact directory itself (as the SDK's `path.resolve(dir, reference)`
/// does). Rejected: NUL bytes, hidden names (starting with `.`), empty names,
/// and any directory part that denotes another directory (parents,
/// subdirectories, siblings sharing a prefix, other absolute paths).
pub(crate) fn reference_filename<'r>(
    artifact_dir: &str,
    reference: &'r str,
    cwd: Option<&str>,
) -> Option<&'r str> {
    if reference.contains('\0') {
        return None;
    }
    let (dir_part, name) = match reference.rfind('/') {
        Some(idx) => (Some(&reference[..=idx]), &reference[idx + 1..]),
        None => (None, reference),
    };
    if !is_artifact_name(name) {
        return None;
    }
    let Some(dir_part) = dir_part else {
        return Some(name);
    };
    if canonical_dir(dir_part) == canonical_dir(artifact_dir) {
        return Some(name);
    }
    let target = resolve(cwd, &[artifact_dir])?;
    let from_cwd = resolve(cwd, &[dir_part]);
    let from_dir = resolve(cwd, &[artifact_dir, dir_part]);
    if from_cwd.as_deref() == Some(target.as_str()) || from_dir.as_deref() == Some(target.as_str())
    {
        return Some(name);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_matches_node() {
        assert_eq!(normalize("/foo/bar//baz/asdf/quux/.."), "/foo/bar/baz/asdf");
        assert_eq!(normalize("./x"), "x");
        assert_eq!(normalize("../a/../b"), "../b");
        assert_eq!(normalize("/../a"), "/a");
        assert_eq!(normalize("a/../.."), "..");
        assert_eq!(normalize(""), ".");
        assert_eq!(normalize("a/.."), ".");
        assert_eq!(normalize("a/../"), "./");
        assert_eq!(normalize("a//b/"), "a/b/");
        assert_eq!(normalize("..."), "...");
        assert_eq!(normalize("/"), "/");
        assert_eq!(normalize(" /x/../.."), ".");
        assert_eq!(normalize("a/b/../../.."), "..");
    }

    #[test]
    fn join_matches_node() {
        assert_eq!(join("./artifacts", "f.txt"), "artifacts/f.txt");
        assert_eq!(join("artifacts/", "f.txt"), "artifacts/f.txt");
        assert_eq!(join("/tmp/a//", "f.txt"), "/tmp/a/f.txt");
        assert_eq!(join("../a", "f"), "../a/f");
        assert_eq!(join(".", "f"), "f");
        assert_eq!(join("/", "f"), "/f");
        assert_eq!(join("a/..", "f"), "f");
        assert_eq!(join("", "f"), "f");
    }

    #[test]
    fn resolve_matches_node() {
        assert_eq!(resolve(Some("/w"), &["a", "../b"]).as_deref(), Some("/w/b"));
        assert_eq!(resolve(Some("/w"), &["/x", "y"]).as_deref(), Some("/x/y"));
        assert_eq!(resolve(Some("/w"), &["a", "/abs"]).as_deref(), Some("/abs"));
        assert_eq!(resolve(Some("/"), &[".."]).as_deref(), Some("/"));
        assert_eq!(resolve(None, &["rel"]), None);
        assert_eq!(resolve(None, &["/a/b/"]).as_deref(), Some("/a/b"));
    }

    #[test]
    fn reference_mapping() {
        let cwd = Some("/w");
        let ok = |dir: &str, r: &str| reference_filename(dir, r, cwd).map(str::to_owned);
        assert_eq!(
            ok("./artifacts", "artifacts/1_2_f.txt").as_deref(),
            Some("1_2_f.txt")
        );
        assert_eq!(
            ok("./artifacts", "./artifacts/1_2_f.txt").as_deref(),
            Some("1_2_f.txt")
        );
        assert_eq!(
            ok("./artifacts", "/w/artifacts/1_2_f.txt").as_deref(),
            Some("1_2_f.txt")
        );
        assert_eq!(
            ok("/w/artifacts", "artifacts/1_2_f.txt").as_deref(),
            Some("1_2_f.txt")
        );
        assert_eq!(ok("artifacts", "1_2_f.txt").as_deref(), Some("1_2_f.txt"));
        assert_eq!(ok("artifacts", "./1_2_f.txt").as_deref(), Some("1_2_f.txt"));
        assert_eq!(
            ok("artifacts", "../artifacts/1_2_f.txt").as_deref(),
            Some("1_2_f.txt")
        );
        assert_eq!(ok("/tmp/art", "/tmp/art/1_2_f").as_deref(), Some("1_2_f"));
        assert_eq!(ok("/tmp/art", "/tmp/art2/1_2_f"), None);
        assert_eq!(ok("/tmp/art", "/tmp/art/sub/1_2_f"), None);
        assert_eq!(ok("/tmp/art", "../1_2_f"), None);
        assert_eq!(ok("/tmp/art", "/etc/passwd"), None);
        assert_eq!(ok("/tmp/art", "/tmp/art/.metadata.json"), None);
        assert_eq!(ok("/tmp/art", "/tmp/art/"), None);
        assert_eq!(ok("/tmp/art", "/tmp/art/.."), None);
        assert_eq!(ok("/tmp/art", "1_2_f\0x"), None);
        // Only artifact names that mean the same on every platform.
        for reference in ["f.txt", "C:.env", "C:/Users/x/secret", "1_2_f:x", "/tmp/art/C:1_2_f", "1_2_f\n", "/tmp/art/notes.json"] {
            assert_eq!(ok("/tmp/art", reference), None, "{reference}");
        }
        assert_eq!(reference_filename("rel", "other/1_2_f", None), None);
        assert_eq!(reference_filename("rel", "rel/1_2_f", None), Some("1_2_f"));
    }
}
