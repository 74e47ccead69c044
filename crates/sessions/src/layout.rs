//! Where each file of a session lives, relative to the base directory.

use std::path::{Path, PathBuf};

use crate::{validate, SnapshotError};

/// Name of the latest snapshot's file.
pub const SNAPSHOT_LATEST: &str = "snapshot_latest.json";
/// Name of the manifest file.
pub const MANIFEST: &str = "manifest.json";
/// Directory of immutable snapshots.
pub const IMMUTABLE_HISTORY: &str = "immutable_history";

/// What a snapshot belongs to: one agent or one multi-agent orchestrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// An agent (`agent`).
    Agent,
    /// A multi-agent orchestrator (`multiAgent`).
    MultiAgent,
}

impl Scope {
    /// Parses the SDK's scope name.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Invalid`] with the SDK's message for anything else.
    pub fn parse(scope: &str) -> Result<Self, SnapshotError> {
        match scope {
            "agent" => Ok(Scope::Agent),
            "multiAgent" => Ok(Scope::MultiAgent),
            other => Err(SnapshotError::Invalid(format!(
                "Invalid scope '{other}': must be 'agent' or 'multiAgent'"
            ))),
        }
    }

    /// The directory name of the scope.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Agent => "agent",
            Scope::MultiAgent => "multiAgent",
        }
    }
}

/// A validated snapshot location: session, scope and scope id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotLocation {
    session_id: String,
    scope: Scope,
    scope_id: String,
}

impl SnapshotLocation {
    /// Validates the parts in the SDK's order (session id, scope, scope id).
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Invalid`] for the first part that is rejected.
    pub fn new(session_id: &str, scope: &str, scope_id: &str) -> Result<Self, SnapshotError> {
        validate::identifier(session_id)?;
        let scope = Scope::parse(scope)?;
        validate::identifier(scope_id)?;
        Ok(Self {
            session_id: session_id.to_owned(),
            scope,
            scope_id: scope_id.to_owned(),
        })
    }

    /// The session id.
    #[must_use]
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// `<session>/scopes/<scope>/<scope id>/snapshots`, the `/`-separated key of the
    /// location's snapshots directory (S3 object keys use it under their prefix).
    #[must_use]
    pub fn snapshots_key(&self) -> String {
        format!("{}/scopes/{}/{}/snapshots", self.session_id, self.scope.as_str(), self.scope_id)
    }

    /// `<base>/<session>/scopes/<scope>/<scope id>/snapshots`.
    #[must_use]
    pub fn snapshots_dir(&self, base: &Path) -> PathBuf {
        base.join(&self.session_id)
            .join("scopes")
            .join(self.scope.as_str())
            .join(&self.scope_id)
            .join("snapshots")
    }
}

/// One file of a location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotFile {
    /// `snapshot_latest.json`.
    Latest,
    /// `manifest.json`.
    Manifest,
    /// `immutable_history/snapshot_<id>.json`; the id is a validated identifier.
    History(String),
}

impl SnapshotFile {
    /// An immutable snapshot file, validating `id` as the SDK does.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Invalid`] when `id` is not an identifier.
    pub fn history(id: &str) -> Result<Self, SnapshotError> {
        validate::identifier(id)?;
        Ok(SnapshotFile::History(id.to_owned()))
    }

    /// The file's `/`-separated key relative to the `snapshots` directory
    /// (`snapshot_latest.json`, `manifest.json`, `immutable_history/snapshot_<id>.json`).
    #[must_use]
    pub fn relative_key(&self) -> String {
        match self {
            SnapshotFile::Latest => SNAPSHOT_LATEST.to_owned(),
            SnapshotFile::Manifest => MANIFEST.to_owned(),
            SnapshotFile::History(id) => format!("{IMMUTABLE_HISTORY}/snapshot_{id}.json"),
        }
    }

    /// The file's path under the location's `snapshots` directory.
    #[must_use]
    pub fn path_in(&self, snapshots_dir: &Path) -> PathBuf {
        match self {
            SnapshotFile::Latest => snapshots_dir.join(SNAPSHOT_LATEST),
            SnapshotFile::Manifest => snapshots_dir.join(MANIFEST),
            SnapshotFile::History(id) => snapshots_dir
                .join(IMMUTABLE_HISTORY)
                .join(format!("snapshot_{id}.json")),
        }
    }
}

/// The snapshot id in a file name, as the SDK extracts it with
/// `/snapshot_([\w-]+)\.json$/` (leftmost match, not anchored at the start).
#[must_use]
pub fn snapshot_id_of(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".json")?;
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut from = 0;
    while let Some(pos) = stem[from..].find("snapshot_") {
        let id = &stem[from + pos + "snapshot_".len()..];
        if !id.is_empty() && id.chars().all(word) {
            return Some(id);
        }
        from += pos + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_names_match_the_sdk_regex() {
        assert_eq!(snapshot_id_of("snapshot_abc-1.json"), Some("abc-1"));
        assert_eq!(snapshot_id_of("xsnapshot_abc.json"), Some("abc"));
        assert_eq!(
            snapshot_id_of("snapshot_snapshot_a.json"),
            Some("snapshot_a")
        );
        assert_eq!(snapshot_id_of("snapshot_.json"), None);
        assert_eq!(snapshot_id_of("snapshot_a.json.tmp"), None);
        assert_eq!(snapshot_id_of("snapshot_a.b.json"), None);
        assert_eq!(snapshot_id_of("snapshot_x.b_snapshot_c.json"), Some("c"));
        assert_eq!(snapshot_id_of(".snapshot_a.json.1-2.tmp"), None);
    }

    #[test]
    fn object_keys_follow_the_layout() {
        let loc = SnapshotLocation::new("s", "agent", "a").unwrap();
        assert_eq!(loc.snapshots_key(), "s/scopes/agent/a/snapshots");
        assert_eq!(SnapshotFile::Latest.relative_key(), "snapshot_latest.json");
        assert_eq!(SnapshotFile::Manifest.relative_key(), "manifest.json");
        assert_eq!(
            SnapshotFile::history("x").unwrap().relative_key(),
            "immutable_history/snapshot_x.json"
        );
    }

    #[test]
    fn locations_validate_in_order() {
        let err = SnapshotLocation::new("BAD", "nope", "X").unwrap_err();
        assert!(err.to_string().starts_with("Identifier 'BAD'"));
        let err = SnapshotLocation::new("s", "nope", "X").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid scope 'nope': must be 'agent' or 'multiAgent'"
        );
        let loc = SnapshotLocation::new("s", "multiAgent", "a").unwrap();
        assert_eq!(
            SnapshotFile::history("x")
                .unwrap()
                .path_in(&loc.snapshots_dir(Path::new("/b"))),
            PathBuf::from("/b/s/scopes/multiAgent/a/snapshots/immutable_history/snapshot_x.json")
        );
    }
}
