//! Expiry, sessions, byte budget, deduplication and cleanup of a file store.
//!
//! What is known of each artifact (size, creation, expiry, session, content
//! digest) is in the directory's journal, so it survives a restart and every
//! process sharing the directory sees it. Removing an artifact unlinks its
//! file and then appends one removal line (no line is rewritten: a journal
//! is only compacted as a whole, see `journal`), and a crash
//! in between leaves a record whose file is gone (dropped by the next sweep),
//! never a file the catalog says was removed. A file that vanished (deleted
//! by hand) is only forgotten, never unlinked, and only once it is known to
//! have been catalogued before a sweep listed the directory and is still
//! missing when looked at again. Deduplicated content lives once in
//! `.blobs/<sha256>`; each artifact is a hard link to it under its own
//! SDK-style name, so tools reading the path still work; the `.blobs` entry
//! goes when the last artifact sharing it does. A new link is read back and
//! compared with the content being stored before it is trusted.

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use offload_atomic::{Dir, EntryKind, FileStamp, Mapped, MappedFound, StampedFound};

use super::journal::Record;
use super::{artifact_write_error, resolve, FileStore, Incoming, Opened, ARTIFACT_TEMPS};
use crate::lifecycle::{digest_hex, sort_artifacts, ArtifactInfo, ContentDigest};
use crate::{check_policy, Blob, GoneReason, Lifecycle, Policy, Stats, StorageError, DEFAULT_CONTENT_TYPE};

/// The directory of deduplicated content (hidden: never served, never
/// listed, reserved in the key-value API).
pub(crate) const BLOBS_DIR: &str = ".blobs";

impl FileStore {
    /// Publishes an artifact as a new name of existing identical content in
    /// [`BLOBS_DIR`]; `None` when there is none, so the content is written
    /// anew. The new name is read back and compared with the content: a
    /// `.blobs` entry that holds other bytes (planted, or an artifact edited
    /// in place, since artifacts are links to it) is never shared; the new
    /// name and the bad entry are removed, and the next
    /// [`share`](Self::share) puts the right content in its place.
    pub(super) fn link_shared(
        &self,
        opened: &Opened,
        digest: &ContentDigest,
        incoming: &Incoming<'_>,
    ) -> Option<(Arc<Dir>, String)> {
        let root = opened.root(self.durable).ok()?;
        let blobs = root.subdir([BLOBS_DIR], None).ok()??;
        let hex = digest_hex(digest);
        if blobs.file_len(&hex).ok()? != Some(incoming.content.len() as u64) {
            return None;
        }
        let name = self
            .claim_name(&root, incoming, |filename| {
                blobs
                    .link_to(&hex, &root, filename)
                    .map_err(|e| StorageError::io("link shared content to", root.path().join(filename), e))
            })
            .ok()?;
        if holds_exactly(&root, &name, incoming.content) {
            return Some((root, name));
        }
        let _ = root.remove_file(&name);
        let _ = blobs.remove_file(&hex);
        None
    }

    /// Whether `.blobs` has an entry of `len` bytes for `digest` (a store
    /// under a budget then writes nothing before it takes the lock).
    pub(super) fn blob_present(&self, opened: &Opened, digest: &ContentDigest, len: u64) -> bool {
        let Ok(root) = opened.root(self.durable) else { return false };
        let Ok(Some(blobs)) = root.subdir([BLOBS_DIR], None) else { return false };
        blobs.file_len(&digest_hex(digest)).ok().flatten() == Some(len)
    }

    /// Makes `filename`'s content findable by its digest (best effort: a
    /// failure only means identical content is written again later).
    pub(super) fn share(&self, root: &Dir, filename: &str, digest: &ContentDigest) {
        if let Ok(Some(blobs)) = root.subdir([BLOBS_DIR], Some(self.durable)) {
            let _ = root.link_to(filename, &blobs, &digest_hex(digest));
        }
    }

    /// Removes artifacts (files first, then one journal append for all of
    /// them) and shared content no artifact uses any more; returns how many
    /// files this call removed (another process may have been first).
    pub(super) fn unlink_artifacts(
        &self,
        opened: &Opened,
        root: &Dir,
        names: &[String],
        reason: Option<GoneReason>,
    ) -> Result<usize, StorageError> {
        if names.is_empty() {
            return Ok(0);
        }
        let mut removed = 0;
        let mut first_error = None;
        let mut done = Vec::with_capacity(names.len());
        for name in names {
            match root.remove_file(name) {
                Ok(true) => {
                    removed += 1;
                    done.push(name.clone());
                }
                // Already gone (another process, a crash before the journal
                // line): the catalog is corrected all the same.
                Ok(false) => done.push(name.clone()),
                Err(e) => {
                    first_error.get_or_insert_with(|| StorageError::io("remove artifact", root.path().join(name), e));
                }
            }
        }
        for name in &done {
            self.removed(name);
        }
        let orphans = opened.catalog.record_removals(&done, reason, self.durable)?;
        self.remove_orphans(root, &orphans);
        if self.durable && removed > 0 {
            root.sync().map_err(artifact_write_error)?;
        }
        opened.catalog.compact_if_due(&ARTIFACT_TEMPS);
        match first_error {
            Some(e) => Err(e),
            None => Ok(removed),
        }
    }

    /// Forgets artifacts whose files vanished (deleted by hand, or by a
    /// process that crashed before its removal line): their removal is
    /// journaled and shared content no artifact uses any more goes, but no
    /// artifact name is unlinked, so an artifact stored under one of those
    /// names meanwhile stays.
    fn forget_vanished(&self, opened: &Opened, root: &Dir, names: &[String]) -> Result<(), StorageError> {
        if names.is_empty() {
            return Ok(());
        }
        for name in names {
            self.removed(name);
        }
        let orphans = opened.catalog.record_removals(names, None, self.durable)?;
        self.remove_orphans(root, &orphans);
        opened.catalog.compact_if_due(&ARTIFACT_TEMPS);
        Ok(())
    }

    /// Removes the `.blobs` entries of digests no artifact uses any more.
    fn remove_orphans(&self, root: &Dir, orphans: &[ContentDigest]) {
        if orphans.is_empty() {
            return;
        }
        if let Ok(Some(blobs)) = root.subdir([BLOBS_DIR], None) {
            for d in orphans {
                let _ = blobs.remove_file(&digest_hex(d));
            }
        }
    }

    /// Removes what must go for `len` more bytes (none when content of
    /// `digest` is already held) to fit under `max_bytes` at `now_ms`: what
    /// expired first, then the least recently used. Called with the budget
    /// lock held and the catalog just read, so no other store runs meanwhile;
    /// each round removes at least one name from the catalog, so it ends.
    pub(super) fn make_room(
        &self,
        opened: &Opened,
        root: &Dir,
        max_bytes: u64,
        len: u64,
        digest: Option<&ContentDigest>,
        now_ms: u64,
    ) -> Result<(), StorageError> {
        loop {
            let next = opened.catalog.write().next_to_free(max_bytes, len, digest, now_ms);
            let Some((names, reason)) = next else { return Ok(()) };
            self.unlink_artifacts(opened, root, &names, Some(reason))?;
        }
    }

    /// Looks up the sizes the catalog does not know (artifacts of older
    /// journals and of the SDK); records whose file is gone when looked at
    /// (each was catalogued before) are dropped.
    pub(super) fn fill_sizes(&self, opened: &Opened, root: &Dir) {
        let unknown = opened.catalog.known().unsized_names();
        if unknown.is_empty() {
            return;
        }
        let sizes: Vec<(String, Option<u64>)> = unknown
            .into_iter()
            .map(|name| {
                let len = root.file_len(&name).ok().flatten();
                (name, len)
            })
            .collect();
        let mut known = opened.catalog.write();
        for (name, len) in sizes {
            match len {
                Some(len) => known.set_size(&name, len),
                None => {
                    known.forget(&name);
                }
            }
        }
    }

    /// Forgets the artifacts whose file is gone (removed by a tool, an
    /// operator, or a process that crashed before its journal line). Only
    /// names catalogued before the directory is listed are candidates (a
    /// name stored while the listing runs may be missing from it), and each
    /// is looked at again before it is forgotten; nothing is unlinked.
    fn reconcile(&self, opened: &Opened, root: &Dir) -> Result<(), StorageError> {
        let catalogued = opened.catalog.refreshed(|known| known.names_where(|_| true));
        let present: HashSet<String> = root
            .entries()
            .map_err(|e| StorageError::io("list artifact directory", root.path(), e))?
            .into_iter()
            .map(|entry| entry.name)
            .collect();
        let vanished: Vec<String> = catalogued
            .into_iter()
            .filter(|name| !present.contains(name))
            .filter(|name| matches!(root.has_entry(name), Ok(false)))
            .collect();
        self.forget_vanished(opened, root, &vanished)
    }

    /// Rewrites the directory's journal with only what it still needs (the
    /// live artifacts and the most recent removals with their reasons), now,
    /// however few of its lines are dead; other processes may go on storing
    /// and reading meanwhile. Stores and removals do this by themselves once
    /// most of the journal's lines are dead. Returns whether it was
    /// rewritten (never on platforms without file identities).
    ///
    /// # Errors
    ///
    /// [`StorageError::Io`] when the journal cannot be read or its
    /// replacement written (the journal is then unchanged).
    pub fn compact_journal(&self) -> Result<bool, StorageError> {
        let opened = self.open_and_sweep(0, false)?;
        opened.catalog.refreshed(|_| ());
        opened.catalog.compact(&ARTIFACT_TEMPS, true)
    }
}

/// Whether the regular file `name` of `root` holds exactly `expected`
/// (read through the directory, never through a link).
fn holds_exactly(root: &Dir, name: &str, expected: &[u8]) -> bool {
    let Ok(Some(mut file)) = root.open_read(name) else { return false };
    let mut buf = vec![0u8; expected.len().clamp(1, 64 * 1024)];
    let mut seen = 0;
    loop {
        match file.read(&mut buf) {
            Ok(0) => return seen == expected.len(),
            Ok(n) => {
                if expected.get(seen..seen + n) != Some(&buf[..n]) {
                    return false;
                }
                seen += n;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// What [`FileStore::retrieve_stamped_at`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StampedBlob {
    /// The artifact's file name: the same for every spelling of its reference.
    pub name: String,
    /// The content type recorded at store time (or
    /// [`DEFAULT_CONTENT_TYPE`]).
    pub content_type: String,
    /// The content; `None` when the caller said it holds this version.
    pub content: Option<Bytes>,
    /// The file's stamp, taken before its content was read (`None` where
    /// the platform has none).
    pub stamp: Option<FileStamp>,
    /// Whether the stamp was settled when taken (see
    /// [`FileStamp::is_settled`]): only then does it name this content for
    /// good.
    pub settled: bool,
}

impl FileStore {
    /// [`Lifecycle::retrieve_at`], telling which version of the file was
    /// found: every check of a retrieve runs (the reference is resolved
    /// and confined, expiry is enforced and the artifact removed, the use
    /// is recorded for the byte budget), then the artifact's file is opened
    /// and `reuse` is shown its name and [`FileStamp`]. When `reuse`
    /// returns `true` (the caller holds what it derived from that version)
    /// the content is not read.
    ///
    /// # Errors
    ///
    /// As [`Lifecycle::retrieve_at`].
    pub fn retrieve_stamped_at(
        &self,
        reference: &str,
        now_ms: u64,
        reuse: impl FnOnce(&str, &FileStamp) -> bool,
    ) -> Result<StampedBlob, StorageError> {
        let found = self.located(reference, now_ms)?;
        let (stamp, settled, content) = match found.root.read_file_stamped(found.name, |stamp| reuse(found.name, stamp)) {
            Ok(StampedFound::File { stamp, settled, content }) => (stamp, settled, content),
            Ok(StampedFound::Directory | StampedFound::Absent) => return Err(found.missing(reference)),
            Err(e) => return Err(StorageError::io("read artifact", found.opened.dir.join(found.name), e)),
        };
        self.used(&found);
        Ok(StampedBlob {
            name: found.name.to_owned(),
            content_type: found.content_type(),
            content: content.map(Bytes::from),
            stamp,
            settled,
        })
    }

    /// [`Lifecycle::retrieve_at`] with the content mapped into memory
    /// rather than read (see [`Dir::map_file`]: a file truncated by another
    /// process while the map is held ends the process with `SIGBUS`, so
    /// this is for one-shot processes such as the command-line tool).
    /// Every check of a retrieve runs.
    ///
    /// # Errors
    ///
    /// As [`Lifecycle::retrieve_at`].
    pub fn retrieve_mapped_at(&self, reference: &str, now_ms: u64) -> Result<MappedBlob, StorageError> {
        let found = self.located(reference, now_ms)?;
        let content = match found.root.map_file(found.name) {
            Ok(MappedFound::File(content)) => content,
            Ok(MappedFound::Directory | MappedFound::Absent) => return Err(found.missing(reference)),
            Err(e) => return Err(StorageError::io("read artifact", found.opened.dir.join(found.name), e)),
        };
        self.used(&found);
        Ok(MappedBlob { content_type: found.content_type(), content })
    }

    /// The first steps of every retrieve: the reference resolved and
    /// confined to the directory, and an expired artifact removed and
    /// reported as gone.
    fn located<'r>(&self, reference: &'r str, now_ms: u64) -> Result<Located<'_, 'r>, StorageError> {
        let opened = self.open(now_ms)?;
        let cwd = std::env::current_dir().ok();
        let cwd = cwd.as_deref().and_then(Path::to_str);
        let name = resolve::reference_filename(&self.artifact_dir, reference, cwd)
            .ok_or_else(|| StorageError::not_found(reference))?;
        let root = opened.root(self.durable)?;
        let record = opened.catalog.get(name);
        if record.as_ref().is_some_and(|r| r.expired(now_ms)) {
            if self.sweeps {
                let _ = self.unlink_artifacts(opened, &root, &[name.to_owned()], Some(GoneReason::Expired));
            }
            return Err(StorageError::gone(reference, GoneReason::Expired));
        }
        Ok(Located { opened, root, name, record, now_ms })
    }

    /// Records a retrieve as a use, for the byte budget's order.
    fn used(&self, found: &Located<'_, '_>) {
        if FileStore::policy(self).max_bytes.is_some() {
            found.opened.catalog.write().touch(found.name, found.now_ms);
        }
    }
}

/// An artifact a retrieve found in the catalog and the directory.
struct Located<'s, 'r> {
    opened: &'s Opened,
    root: Arc<Dir>,
    /// Its file name (a part of the reference).
    name: &'r str,
    record: Option<Record>,
    /// The time of the retrieve.
    now_ms: u64,
}

impl Located<'_, '_> {
    /// The error for a file that is not there (any more): gone, with the
    /// reason the catalog remembers, or not found.
    fn missing(&self, reference: &str) -> StorageError {
        match self.opened.catalog.refreshed(|known| known.removals.reason(self.name)) {
            Some(reason) => StorageError::gone(reference, reason),
            None => StorageError::not_found(reference),
        }
    }

    fn content_type(&self) -> String {
        self.record.as_ref().map_or_else(|| DEFAULT_CONTENT_TYPE.to_owned(), |r| r.content_type.clone())
    }
}

/// What [`FileStore::retrieve_mapped_at`] found.
#[derive(Debug)]
pub struct MappedBlob {
    /// The content type recorded at store time (or [`DEFAULT_CONTENT_TYPE`]).
    pub content_type: String,
    /// The content, mapped.
    pub content: Mapped,
}

impl Lifecycle for FileStore {
    fn policy(&self) -> Policy {
        FileStore::policy(self)
    }

    fn set_policy(&self, policy: Policy) -> Result<(), StorageError> {
        check_policy(&policy)?;
        *self.shared.policy.write().unwrap_or_else(std::sync::PoisonError::into_inner) = policy;
        if policy.max_bytes.is_none() {
            if let Some(opened) = self.shared.opened.get() {
                opened.catalog.write().track_uses(false);
            }
        }
        Ok(())
    }

    /// Accepts references in either [`ReferenceStyle`](super::ReferenceStyle),
    /// bare file names, and any spelling whose directory part resolves to the
    /// artifact directory. Everything else (escapes, siblings,
    /// subdirectories, hidden files, symlinks, non-regular files) is
    /// [`StorageError::NotFound`]; an artifact whose TTL ran out is
    /// [`StorageError::Gone`] and is removed.
    fn retrieve_at(&self, reference: &str, now_ms: u64) -> Result<Blob, StorageError> {
        let found = self.retrieve_stamped_at(reference, now_ms, |_, _| false)?;
        Ok(Blob { content: found.content.unwrap_or_default(), content_type: found.content_type })
    }

    /// Looks the reference up in the catalog (read again when it does not
    /// know the name) and checks, without following a link, that its
    /// regular file is there; a file without a record counts, as a
    /// retrieve reads it.
    fn holds(&self, reference: &str, now_ms: u64) -> Result<bool, StorageError> {
        let opened = self.open(now_ms)?;
        let cwd = std::env::current_dir().ok();
        let Some(name) = resolve::reference_filename(&self.artifact_dir, reference, cwd.as_deref().and_then(Path::to_str))
        else {
            return Ok(false);
        };
        if opened.catalog.get(name).is_some_and(|r| r.expired(now_ms)) {
            return Ok(false);
        }
        let root = opened.root(self.durable)?;
        root.file_len(name)
            .map(|len| len.is_some())
            .map_err(|e| StorageError::io("look at artifact", root.path().join(name), e))
    }

    fn cleanup_expired(&self, now_ms: u64) -> Result<usize, StorageError> {
        let opened = self.open_and_sweep(now_ms, false)?;
        let root = opened.root(self.durable)?;
        let expired = opened.catalog.refreshed(|known| known.expired(now_ms));
        let removed = self.unlink_artifacts(opened, &root, &expired, Some(GoneReason::Expired))?;
        self.reconcile(opened, &root)?;
        Ok(removed)
    }

    fn delete_session(&self, session: &str) -> Result<usize, StorageError> {
        let now = crate::lifecycle::system_now_ms();
        let opened = self.open(now)?;
        let root = opened.root(self.durable)?;
        let names = opened.catalog.refreshed(|known| known.names_where(|r| r.session.as_deref() == Some(session)));
        self.unlink_artifacts(opened, &root, &names, None)
    }

    fn stats(&self, now_ms: u64) -> Result<Stats, StorageError> {
        let opened = self.open(now_ms)?;
        let root = opened.root(self.durable)?;
        opened.catalog.refreshed(|_| ());
        self.fill_sizes(opened, &root);
        Ok(opened.catalog.known().stats(now_ms))
    }

    /// Artifacts recorded in the journal (or the SDK's `.metadata.json`)
    /// whose file is present; sizes and creation times the catalog does not
    /// know are read from the file. A file with no record (its writer died
    /// between publishing it and journaling it, or it is being stored right
    /// now) is not listed.
    fn list_artifacts(&self) -> Result<Vec<ArtifactInfo>, StorageError> {
        let opened = self.open_and_sweep(0, false)?;
        let root = opened.root(self.durable)?;
        opened.catalog.refreshed(|_| ());
        let present: HashSet<String> = root
            .entries()
            .map_err(|e| StorageError::io("list artifact directory", root.path(), e))?
            .into_iter()
            .filter(|entry| entry.kind == EntryKind::File)
            .map(|entry| entry.name)
            .collect();
        let listed: Vec<(String, Record)> = opened
            .catalog
            .known()
            .records
            .iter()
            .filter(|(name, _)| present.contains(*name))
            .map(|(name, record)| (name.clone(), record.clone()))
            .collect();
        let mut out = Vec::with_capacity(listed.len());
        for (name, record) in listed {
            let (mut bytes, mut created_ms) = (record.bytes, record.created_ms);
            if bytes.is_none() || created_ms.is_none() {
                let Ok(Some((len, modified))) = root.file_len_and_modified(&name) else { continue };
                bytes.get_or_insert(len);
                if created_ms.is_none() {
                    created_ms = modified.and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| {
                        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
                    });
                }
            }
            out.push(ArtifactInfo {
                reference: resolve::join(&self.artifact_dir, &name),
                name,
                content_type: record.content_type,
                bytes: bytes.unwrap_or(0),
                session: record.session.as_deref().map(str::to_owned),
                created_ms,
                expires_ms: record.expires_ms,
            });
        }
        sort_artifacts(&mut out);
        Ok(out)
    }

    /// Only names the catalog records are removed (anything else, including
    /// names that would reach outside the directory, is skipped); the
    /// expiry check of `only_expired_at` reads the journal again first, so
    /// it sees what other processes stored since.
    fn remove_artifacts(&self, names: &[String], only_expired_at: Option<u64>) -> Result<usize, StorageError> {
        let opened = self.open_and_sweep(0, false)?;
        let root = opened.root(self.durable)?;
        let picked = opened.catalog.refreshed(|known| {
            names
                .iter()
                .filter(|name| {
                    known.records.get(name.as_str()).is_some_and(|r| only_expired_at.is_none_or(|at| r.expired(at)))
                })
                .cloned()
                .collect::<Vec<String>>()
        });
        self.unlink_artifacts(opened, &root, &picked, only_expired_at.map(|_| GoneReason::Expired))
    }
}
