//! File-system blob store (the SDK's `FileStorage`), crash-safe and safe to
//! share between instances and processes.
//!
//! # On-disk layout
//!
//! ```text
//! <artifact dir>/
//!   <ms>_<n>_<sanitized key><ext>   one file per artifact, raw content
//!   .metadata.journal               {"f":"<file name>","t":"<content type>"}\n per artifact
//!   .metadata.json                  SDK-written map file name -> content type (read only)
//!   .metadata.lock                  locked while a store under a byte budget evicts and publishes
//!   .tmp-<pid>-<seq>                in-flight writes (removed when older than an hour)
//!   .blobs/<sha256>                 deduplicated content, hard-linked to its artifacts
//!   <key segments>/...              values of the key-value API (see `keys`)
//! ```

mod journal;
mod keys;
mod lifecycle;
mod names;
mod resolve;

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use offload_atomic::{Dir, Staged, Step, TempNames};

use crate::{Blob, BlobStore, NewBlob, Sequence, StorageError};
use journal::{Catalog, Record, LOCK_FILE};

use crate::lifecycle::{digest, ContentDigest};
use crate::removal::{next_store_id, HookSlot, Removal, RemovalHook};
use crate::Policy;

pub use lifecycle::{MappedBlob, StampedBlob};
pub use names::{is_artifact_name, sanitize_id};

/// Prefix of the temporary files of artifacts; hidden, so never served by
/// `retrieve`, and reserved in the key-value API.
pub(crate) const TEMP_PREFIX: &str = ".tmp-";

/// Names of the temporary files of artifacts (and of compacted journals):
/// `.tmp-<pid>-<seq>`.
const ARTIFACT_TEMPS: TempNames = TempNames::plain(TEMP_PREFIX);

/// How many final names are tried before a store gives up (each collision
/// bumps the counter, so this is only reached if something is badly wrong).
const MAX_NAME_ATTEMPTS: u32 = 1000;

/// How [`FileStore::store_blob_with_style`] spells the returned reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReferenceStyle {
    /// Node's `path.join(artifactDir, filename)`, normalized (`./artifacts`
    /// gives `artifacts/<file>`). What the SDK's standalone `store()`
    /// returns.
    #[default]
    Joined,
    /// The artifact directory with trailing `/` removed, then `/<file>`
    /// (`./artifacts/` gives `./artifacts/<file>`). What the SDK returns when
    /// it runs through the plugin (sandbox mode).
    Concatenated,
}

/// State created when the directory is first used.
#[derive(Debug)]
struct Opened {
    dir: PathBuf,
    /// What is known of the artifacts, and the open directory.
    catalog: Catalog,
    /// The directory's lock file, opened on the first store under a byte
    /// budget (see [`Opened::lock_budget`]).
    budget: Mutex<Option<LockFile>>,
}

/// An artifact on its way into the directory.
struct Incoming<'a> {
    sequence: u64,
    key: &'a str,
    content: &'a [u8],
    content_type: &'a str,
    /// Its digest, when the store deduplicates.
    digest: Option<ContentDigest>,
}

/// File-system storage backend with the SDK's `FileStorage` file names and
/// references.
///
/// Each artifact is one file named
/// `<Date.now()>_<counter>_<sanitize_id(key)><ext>` (see [`sanitize_id`];
/// `ext` is `.txt` for `text/plain`, otherwise `.` plus the content subtype).
/// Names longer than 255 bytes are shortened with a hash of the key.
///
/// Guarantees:
/// * **Atomic, no clobbering**: content is written to a hidden temporary
///   file and published with a hard link, which never replaces an existing
///   file; on a name collision the counter is bumped and another name is
///   tried. Several instances and processes may share one directory.
/// * **O(1) per store**: content types are appended, one line per artifact,
///   to `.metadata.journal`; once most of its lines are dead (removed
///   artifacts), the journal is compacted, safely for concurrent writers and
///   readers, at an amortised constant cost per line.
/// * **Budgets hold across processes**: with a byte budget, a store takes
///   the directory's lock (`.metadata.lock`) to evict and publish, so the
///   artifacts on disk never add up to more than the budget.
/// * **Confined reads**: [`retrieve`](BlobStore::retrieve) only ever opens a
///   regular, non-hidden file directly inside the directory, never through a
///   symlink.
/// * **Durability is opt-in**: by default nothing is fsynced, so an artifact
///   or its content type may be lost in an OS crash or power failure (never
///   in a process crash). [`with_durable(true)`](Self::with_durable) fsyncs
///   the file, the directory and the journal on every store, at the cost of
///   one to three disk flushes per store.
///
/// The constructor does no I/O. The directory is created and its metadata
/// loaded on first use; stale temporary files left by crashed writers are
/// removed at that point.
#[derive(Debug)]
pub struct FileStore {
    artifact_dir: String,
    durable: bool,
    /// Whether opening the directory and retrieving remove what expired
    /// (see [`keeping_expired`](Self::keeping_expired)).
    sweeps: bool,
    counter: Sequence,
    /// The directory's state, shared by every [`view`](Self::view).
    shared: Arc<Shared>,
}

/// What the views of one directory share: the open directory and its content types.
#[derive(Debug)]
struct Shared {
    /// Whether to stage content in unnamed (`O_TMPFILE`) files; turned off
    /// for good after one cannot be linked.
    anonymous_files: AtomicBool,
    opened: OnceLock<Opened>,
    open_lock: Mutex<()>,
    /// Expiry, budget and deduplication (all off by default).
    policy: RwLock<Policy>,
    /// The number naming the store and its views (see [`FileStore::id`]).
    id: u64,
    /// Told of every artifact removed through the store or a view.
    hook: HookSlot,
}

impl Drop for Shared {
    /// Tells the removal hook that the store (with its last view) is gone.
    fn drop(&mut self) {
        self.hook.notify(self.id, Removal::All);
    }
}

impl FileStore {
    /// Creates a store writing into `artifact_dir` (relative paths are
    /// resolved against the process working directory at each use, as in
    /// the SDK). Performs no I/O.
    #[must_use]
    pub fn new(artifact_dir: &str) -> Self {
        FileStore {
            artifact_dir: artifact_dir.to_owned(),
            durable: false,
            sweeps: true,
            counter: Sequence::default(),
            shared: Arc::new(Shared {
                anonymous_files: AtomicBool::new(true),
                opened: OnceLock::new(),
                open_lock: Mutex::new(()),
                policy: RwLock::default(),
                id: next_store_id(),
                hook: HookSlot::default(),
            }),
        }
    }

    /// Another store on the same directory with its own sequence of numbers
    /// (as the SDK gives each agent its own `FileStorage`) that shares the
    /// open directory and its content types with this one: the directory is
    /// opened, and its journal read, once for all of them.
    #[must_use]
    pub fn view(&self) -> FileStore {
        FileStore {
            artifact_dir: self.artifact_dir.clone(),
            durable: self.durable,
            sweeps: self.sweeps,
            counter: Sequence::default(),
            shared: Arc::clone(&self.shared),
        }
    }

    /// A number naming this store and its [views](Self::view) among all
    /// the stores of the process, never given to another one (the `store`
    /// its removal hook is told). Another `FileStore` on the same directory
    /// has its own.
    #[must_use]
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// Sets the hook told of every artifact this store or one of its views
    /// removes, by file name (see [`crate::removal`]); `None` removes it.
    pub fn set_removal_hook(&self, hook: Option<RemovalHook>) {
        self.shared.hook.set(hook);
    }

    /// Tells the removal hook that `name` was removed.
    pub(crate) fn removed(&self, name: &str) {
        self.shared.hook.notify(self.shared.id, Removal::Artifact(name));
    }

    /// Opens the directory (reads its journal, sweeps what expired by
    /// `now_ms`, the storage's clock) unless it is open: what the first store
    /// does before it writes.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidArgument`] for an empty directory path or one
    /// with a NUL byte.
    pub fn open_at(&self, now_ms: u64) -> Result<(), StorageError> {
        self.open(now_ms).map(|_| ())
    }

    /// Whether the directory has been opened (its journal read), so that a
    /// store costs only its own write.
    #[must_use]
    pub fn is_open(&self) -> bool {
        self.shared.opened.get().is_some()
    }

    /// Enables or disables fsync of each artifact, its directory entry and
    /// its journal line before [`store`](BlobStore::store) returns.
    #[must_use]
    pub fn with_durable(mut self, durable: bool) -> Self {
        self.durable = durable;
        self
    }

    /// An operator's store (for tools that look before they remove):
    /// opening the directory removes nothing, and an expired artifact is
    /// reported [gone](StorageError::Gone) but left in place. Only the
    /// explicit removals of [`Lifecycle`](crate::Lifecycle)
    /// (`remove_artifacts`, `cleanup_expired`, `delete_session`) remove.
    /// Must be set before the directory is first opened by this store.
    #[must_use]
    pub fn keeping_expired(mut self) -> Self {
        self.sweeps = false;
        self
    }

    /// The policy shared by this store and its views.
    fn policy(&self) -> Policy {
        *self.shared.policy.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether stores are fsynced (see [`with_durable`](Self::with_durable)).
    pub fn is_durable(&self) -> bool {
        self.durable
    }

    /// The artifact directory exactly as given to [`new`](Self::new).
    pub fn artifact_dir(&self) -> &str {
        &self.artifact_dir
    }

    /// Stores `content` and returns its reference spelled as `style`
    /// (takes the next sequence number itself).
    ///
    /// # Errors
    ///
    /// As [`FileStore::store_blob_with_style`].
    pub fn store_with_style(
        &self,
        key: &str,
        content: Bytes,
        content_type: &str,
        style: ReferenceStyle,
    ) -> Result<String, StorageError> {
        let sequence = self.next_sequence();
        self.store_blob_with_style(NewBlob { sequence, key, content, content_type, tags: crate::Tags::default() }, style)
    }

    /// Stores a blob under its sequence number (from
    /// [`BlobStore::next_sequence`]) and returns its reference spelled as
    /// `style`. If another writer already holds that name, later numbers are
    /// tried.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidArgument`] for an empty artifact directory or
    /// one containing a NUL byte; [`StorageError::Io`] when the directory
    /// cannot be created or the file or journal cannot be written (disk
    /// full, permissions, ...). A failed store leaves no file under a final
    /// name and does not touch earlier artifacts.
    pub fn store_blob_with_style(&self, blob: NewBlob<'_>, style: ReferenceStyle) -> Result<String, StorageError> {
        let NewBlob { sequence, key, content, content_type, tags } = blob;
        let policy = self.policy();
        let len = content.len() as u64;
        crate::check_fits(&policy, len)?;
        let now = tags.now();
        let opened = self.open(now)?;
        let digest = policy.dedup.then(|| digest(&content));
        let incoming = Incoming { sequence, key, content: &content, content_type, digest };
        let record = Record {
            content_type: content_type.to_owned(),
            bytes: Some(len),
            created_ms: Some(now),
            expires_ms: tags.expires_at(&policy),
            session: tags.session.map(Arc::from),
            digest: digest.map(Box::new),
        };
        let filename = match policy.max_bytes {
            None => self.publish_and_record(opened, &incoming, record)?,
            Some(max_bytes) => self.store_under_budget(opened, &incoming, record, max_bytes, now)?,
        };
        Ok(match style {
            ReferenceStyle::Joined => resolve::join(&self.artifact_dir, &filename),
            ReferenceStyle::Concatenated => {
                format!("{}/{}", self.artifact_dir.trim_end_matches('/'), filename)
            }
        })
    }

    /// Publishes an artifact (a new name of identical content already
    /// held, or its content written anew) and journals it; returns its name.
    fn publish_and_record(&self, opened: &Opened, incoming: &Incoming<'_>, record: Record) -> Result<String, StorageError> {
        let linked = incoming.digest.as_ref().and_then(|d| self.link_shared(opened, d, incoming));
        let (root, filename) = match linked {
            Some(done) => done,
            None => self.write_new(opened, incoming)?,
        };
        self.finish_store(opened, &root, &filename, incoming.digest.as_ref(), record)?;
        Ok(filename)
    }

    /// Stores within `max_bytes`: the content is written (unnamed) first,
    /// then, holding the directory's budget lock, the catalog is read again,
    /// what must go to make room goes (what expired first, then the least
    /// recently used), and the artifact is published and journaled. With
    /// every store serialised that way across threads and processes, the
    /// artifacts on disk never add up to more than the budget.
    fn store_under_budget(
        &self,
        opened: &Opened,
        incoming: &Incoming<'_>,
        record: Record,
        max_bytes: u64,
        now_ms: u64,
    ) -> Result<String, StorageError> {
        let len = incoming.content.len() as u64;
        let already_held = incoming.digest.as_ref().is_some_and(|d| self.blob_present(opened, d, len));
        let mut staged = if already_held { None } else { Some(self.stage_with_fallback(opened, incoming.content)?) };
        let result = (|| {
            let _budget = opened.lock_budget(self.durable)?;
            let root = opened.root(self.durable)?;
            opened.catalog.refreshed(|_| ());
            self.fill_sizes(opened, &root);
            self.make_room(opened, &root, max_bytes, len, incoming.digest.as_ref(), now_ms)?;
            let linked = incoming.digest.as_ref().and_then(|d| self.link_shared(opened, d, incoming));
            let (root, filename) = match linked {
                Some(done) => done,
                None => {
                    if incoming.digest.is_some() {
                        // Counted as shared, but not linked after all: the
                        // content needs room of its own.
                        self.make_room(opened, &root, max_bytes, len, None, now_ms)?;
                    }
                    match staged.take() {
                        Some((root, content)) => self.publish_staged(opened, root, content, incoming)?,
                        None => self.write_new(opened, incoming)?,
                    }
                }
            };
            self.finish_store(opened, &root, &filename, incoming.digest.as_ref(), record)?;
            Ok(filename)
        })();
        if let Some((root, content)) = staged {
            content.discard(&root);
        }
        result
    }

    /// The last steps of a store: the content made findable by its digest,
    /// the journal line (and with `durable`, the directory flushed). On
    /// failure the artifact's name is removed again.
    fn finish_store(
        &self,
        opened: &Opened,
        root: &Dir,
        filename: &str,
        digest: Option<&ContentDigest>,
        record: Record,
    ) -> Result<(), StorageError> {
        if let Some(d) = digest {
            self.share(root, filename, d);
        }
        if let Err(e) = opened.catalog.record(filename, record, self.durable) {
            let _ = root.remove_file(filename);
            return Err(e);
        }
        if self.durable {
            // One directory flush covers the artifact's name and, on the
            // first store, the journal's.
            if let Err(e) = root.sync() {
                let _ = root.remove_file(filename);
                return Err(artifact_write_error(e));
            }
        }
        Ok(())
    }

    /// Writes `content` as a new file under the first free artifact name
    /// (see [`FileStore::stage_and_publish`]).
    fn write_new(&self, opened: &Opened, incoming: &Incoming<'_>) -> Result<(Arc<Dir>, String), StorageError> {
        match self.stage_and_publish(opened, incoming) {
            Ok(done) => Ok(done),
            Err(e) if self.shared.anonymous_files.swap(false, Ordering::Relaxed) => {
                // An unnamed file that could not be linked (for example where
                // `/proc` is not mounted): use named temporary files from now on.
                self.stage_and_publish(opened, incoming).map_err(|_| e)
            }
            Err(e) => Err(e),
        }
    }

    /// Stages `content` (see [`FileStore::stage`]); an unnamed file that
    /// cannot be made turns unnamed files off and a named one is tried.
    fn stage_with_fallback(&self, opened: &Opened, content: &[u8]) -> Result<(Arc<Dir>, Staged), StorageError> {
        match self.stage(opened, content) {
            Err(e) if self.shared.anonymous_files.swap(false, Ordering::Relaxed) => {
                self.stage(opened, content).map_err(|_| e)
            }
            other => other,
        }
    }

    /// Publishes content staged earlier under the first free artifact name;
    /// when it cannot be (an unnamed file that cannot be linked), it is
    /// written again as a named temporary file and published.
    fn publish_staged(
        &self,
        opened: &Opened,
        root: Arc<Dir>,
        staged: Staged,
        incoming: &Incoming<'_>,
    ) -> Result<(Arc<Dir>, String), StorageError> {
        match self.publish(&root, &staged, incoming) {
            Ok(name) => Ok((root, name)),
            Err(e) => {
                staged.discard(&root);
                if self.shared.anonymous_files.swap(false, Ordering::Relaxed) {
                    self.stage_and_publish(opened, incoming).map_err(|_| e)
                } else {
                    Err(e)
                }
            }
        }
    }

    /// Writes the content unnamed into the directory and publishes it under
    /// the first free artifact name; nothing is left behind on failure.
    /// Returns the directory it was published in and the name.
    fn stage_and_publish(&self, opened: &Opened, incoming: &Incoming<'_>) -> Result<(Arc<Dir>, String), StorageError> {
        let (root, staged) = self.stage(opened, incoming.content)?;
        match self.publish(&root, &staged, incoming) {
            Ok(name) => Ok((root, name)),
            Err(e) => {
                staged.discard(&root);
                Err(e)
            }
        }
    }

    /// Stages the content, creating the directory again if it has gone
    /// missing (and then starting a new journal in it).
    fn stage(&self, opened: &Opened, content: &[u8]) -> Result<(Arc<Dir>, Staged), StorageError> {
        let unnamed = self.shared.anonymous_files.load(Ordering::Relaxed);
        let root = opened.root(self.durable)?;
        match Staged::write(&root, content, &ARTIFACT_TEMPS, self.durable, unnamed) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let root = opened.reopen(self.durable)?;
                opened.catalog.reset_journal();
                let staged = Staged::write(&root, content, &ARTIFACT_TEMPS, self.durable, unnamed)
                    .map_err(artifact_write_error)?;
                Ok((root, staged))
            }
            other => Ok((root, other.map_err(artifact_write_error)?)),
        }
    }

    /// Publishes `staged` under the first free artifact name and returns it.
    fn publish(&self, root: &Dir, staged: &Staged, incoming: &Incoming<'_>) -> Result<String, StorageError> {
        self.claim_name(root, incoming, |filename| staged.publish_new(root, filename).map_err(artifact_write_error))
    }

    /// Tries artifact names (from `sequence` on, later numbers on a
    /// collision) with `publish_as` until one is free; returns it.
    fn claim_name(
        &self,
        root: &Dir,
        incoming: &Incoming<'_>,
        mut publish_as: impl FnMut(&str) -> Result<bool, StorageError>,
    ) -> Result<String, StorageError> {
        for attempt in 0..MAX_NAME_ATTEMPTS {
            let counter = if attempt == 0 { incoming.sequence } else { self.next_sequence() };
            let filename = names::artifact_filename(now_ms(), counter, incoming.key, incoming.content_type);
            if publish_as(&filename)? {
                return Ok(filename);
            }
        }
        Err(StorageError::io(
            "find a free artifact name in",
            root.path(),
            io::Error::from(io::ErrorKind::AlreadyExists),
        ))
    }

    /// Opens the directory on first use: validates the path, creates and
    /// opens the directory (best effort; a store reports the error), removes
    /// stale temporary files, loads the catalog and removes the artifacts
    /// expired at `now_ms` (not on a store [keeping what
    /// expired](Self::keeping_expired)).
    fn open(&self, now_ms: u64) -> Result<&Opened, StorageError> {
        self.open_and_sweep(now_ms, self.sweeps)
    }

    /// [`FileStore::open`]; the sweep of what expired only with `sweep`.
    fn open_and_sweep(&self, now_ms: u64, sweep: bool) -> Result<&Opened, StorageError> {
        if let Some(opened) = self.shared.opened.get() {
            return Ok(opened);
        }
        if self.artifact_dir.is_empty() || self.artifact_dir.contains('\0') {
            return Err(StorageError::InvalidArgument(format!(
                "artifact directory must be a non-empty path without NUL bytes: {:?}",
                self.artifact_dir
            )));
        }
        let _guard = self
            .shared
            .open_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(opened) = self.shared.opened.get() {
            return Ok(opened);
        }
        let dir = PathBuf::from(&self.artifact_dir);
        let root = Dir::open(&dir, true, self.durable).ok().map(Arc::new);
        if let Some(root) = &root {
            root.sweep_stale(&ARTIFACT_TEMPS, offload_atomic::STALE_AFTER);
        }
        let catalog = Catalog::load(root);
        let opened = self.shared.opened.get_or_init(|| Opened { dir, catalog, budget: Mutex::new(None) });
        // What expired while no store had the directory open goes now.
        if let (true, Ok(root)) = (sweep, opened.root(self.durable)) {
            let expired = opened.catalog.known().expired(now_ms);
            let _ = self.unlink_artifacts(opened, &root, &expired, Some(crate::GoneReason::Expired));
        }
        opened.catalog.compact_if_due(&ARTIFACT_TEMPS);
        Ok(opened)
    }
}

impl Opened {
    /// The open artifact directory (opened, and created, if it could not be
    /// when the store opened).
    fn root(&self, durable: bool) -> Result<Arc<Dir>, StorageError> {
        if let Some(root) = self.catalog.root() {
            return Ok(root);
        }
        self.reopen(durable)
    }

    /// Creates the directory if needed and opens it again (after it was
    /// removed while open, a new directory has to be created and opened).
    fn reopen(&self, durable: bool) -> Result<Arc<Dir>, StorageError> {
        let root = Dir::open(&self.dir, true, durable)
            .map(Arc::new)
            .map_err(|e| StorageError::io("create artifact directory", &self.dir, e))?;
        self.catalog.set_root(Arc::clone(&root));
        Ok(root)
    }

    /// Takes the directory's budget lock: an exclusive lock on
    /// `.metadata.lock` (opened through the directory, never through a
    /// link, created if missing), which serialises the stores under a byte
    /// budget of every process and every instance, taken under a mutex
    /// that serialises the threads sharing this descriptor. Released when
    /// the guard is dropped.
    fn lock_budget(&self, durable: bool) -> Result<BudgetLock<'_>, StorageError> {
        let mut slot = self.budget.lock().unwrap_or_else(PoisonError::into_inner);
        for _ in 0..3 {
            let root = self.root(durable)?;
            let error = |e| StorageError::io("lock", root.path().join(LOCK_FILE), e);
            let lock = match slot.take() {
                Some(lock) => lock,
                None => LockFile::open(&root).map_err(error)?,
            };
            lock.file.lock().map_err(error)?;
            if lock.is_current(&root) {
                *slot = Some(lock);
                return Ok(BudgetLock { slot });
            }
            // Removed or replaced since it was opened: another process may
            // hold the new one. Dropping the descriptor releases the lock.
        }
        Err(StorageError::io(
            "lock",
            self.dir.join(LOCK_FILE),
            io::Error::other("the lock file was replaced on every attempt"),
        ))
    }
}

/// The directory's lock file, open.
#[derive(Debug)]
struct LockFile {
    file: File,
    /// Its device and inode, to tell whether the name still names it.
    #[cfg(unix)]
    identity: (u64, u64),
}

impl LockFile {
    /// Opens `.metadata.lock` of `root` (created if missing), through the
    /// directory and never through a link.
    fn open(root: &Dir) -> io::Result<Self> {
        let file = root.open_append(LOCK_FILE, true)?;
        #[cfg(unix)]
        let identity = offload_atomic::file_identity(&file)?;
        Ok(LockFile {
            file,
            #[cfg(unix)]
            identity,
        })
    }

    /// Whether it is still the directory's lock file (taken as yes where
    /// files have no identity to compare).
    fn is_current(&self, root: &Dir) -> bool {
        #[cfg(unix)]
        {
            root.identity(LOCK_FILE).ok().flatten() == Some(self.identity)
        }
        #[cfg(not(unix))]
        {
            let _ = root;
            true
        }
    }
}

/// The budget lock of a directory, held (see [`Opened::lock_budget`]).
struct BudgetLock<'a> {
    slot: MutexGuard<'a, Option<LockFile>>,
}

impl Drop for BudgetLock<'_> {
    fn drop(&mut self) {
        if let Some(lock) = self.slot.as_ref() {
            let _ = lock.file.unlock();
        }
    }
}

impl BlobStore for FileStore {
    fn next_sequence(&self) -> u64 {
        self.counter.next()
    }

    /// Stores with [`ReferenceStyle::Joined`] references, like the SDK's
    /// standalone `FileStorage.store()`.
    fn store_blob(&self, blob: NewBlob<'_>) -> Result<String, StorageError> {
        self.store_blob_with_style(blob, ReferenceStyle::Joined)
    }

    /// Accepts references in either [`ReferenceStyle`], bare file names, and
    /// any spelling whose directory part resolves to the artifact directory.
    /// Everything else (escapes, siblings, subdirectories, hidden files,
    /// symlinks, non-regular files) is [`StorageError::NotFound`].
    fn retrieve(&self, reference: &str) -> Result<Blob, StorageError> {
        crate::Lifecycle::retrieve_at(self, reference, crate::lifecycle::system_now_ms())
    }
}

/// A failed step of writing an artifact, as a [`StorageError::Io`] naming it.
fn artifact_write_error(e: offload_atomic::Error) -> StorageError {
    let op = match e.step {
        Step::CreateTemp => "create temporary file",
        Step::Write => "write artifact",
        Step::Publish => "publish artifact",
        Step::SyncDirectory => "sync artifact directory",
    };
    StorageError::io(op, e.path, e.source)
}

/// Milliseconds since the Unix epoch (`Date.now()`).
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
