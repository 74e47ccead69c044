//! Generated hostile keys, prefixes, scopes and references against the file
//! and memory stores (100,000 cases each): nothing outside the store's
//! directory is ever read, written, listed or deleted, the store's own files
//! (journal, metadata, temporaries, artifacts) are never reached through the
//! key-value API, and every accepted key names the same file on every
//! platform. Windows-shaped inputs (drive letters, device names, trailing
//! dots, backslashes) are part of the alphabet.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use offload_storage::{
    segment_problem, BlobStore, Bytes, FileStore, KeyValueStore, MemoryStore, StorageError,
};
use proptest::prelude::*;

const CASES: u32 = 100_000;
const PAYLOAD: &[u8] = b"PAYLOAD";
const OUTSIDE: &[u8] = b"OUTSIDE";

/// Segments a key or reference is made of: a few plain names (so accepted
/// keys repeat and the tree stays small) and everything hostile.
const SEGMENTS: &[&str] = &[
    "a",
    "b",
    "ok.txt",
    ".h",
    ".",
    "..",
    "...",
    "",
    " ",
    "a.",
    "a ",
    "C:",
    "c:",
    "C:.env",
    "D:secret",
    "x:y",
    "CON",
    "con.txt",
    "Nul",
    "COM1",
    "lpt9.log",
    "aux.",
    "a\\b",
    "\\",
    "..\\..",
    "\u{0}",
    "a\tb",
    "<",
    "a|b",
    "?",
    "*",
    ".metadata.journal",
    ".METADATA.JOURNAL",
    ".metadata.json",
    ".Metadata.Json",
    ".tmp-1-1",
    ".TMP-1-1",
    "1700000000000_1_k.txt",
    "1_2_x",
    "k.__strands_tmp_1-2",
    "link",
    "outside",
    "root2",
    "secret",
];

fn key() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(&[false, true][..]),
        proptest::collection::vec(proptest::sample::select(SEGMENTS), 1..4),
        proptest::sample::select(&[false, true][..]),
    )
        .prop_map(|(lead, parts, trail)| {
            let mut key = if lead { "/".to_owned() } else { String::new() };
            key.push_str(&parts.join("/"));
            if trail {
                key.push('/');
            }
            key
        })
}

#[derive(Debug, Clone)]
enum Op {
    Write(String, String),
    Read(String, String),
    Delete(String, String),
    List(String, String),
    Retrieve(String),
}

fn op() -> impl Strategy<Value = Op> {
    let scope = prop_oneof![4 => Just(String::new()), 1 => key()];
    prop_oneof![
        4 => (scope.clone(), key()).prop_map(|(s, k)| Op::Write(s, k)),
        3 => (scope.clone(), key()).prop_map(|(s, k)| Op::Read(s, k)),
        2 => (scope.clone(), key()).prop_map(|(s, k)| Op::Delete(s, k)),
        1 => (scope, key()).prop_map(|(s, k)| Op::List(s, k)),
        3 => key().prop_map(Op::Retrieve),
    ]
}

/// `<sandbox>/root` is the store; around it, bait.
struct Sandbox {
    _tmp: tempfile::TempDir,
    sandbox: PathBuf,
    root: PathBuf,
    store: FileStore,
    artifact: String,
    /// The store's own files and the bait, with their contents.
    protected: Vec<(PathBuf, Vec<u8>)>,
}

static SANDBOX: LazyLock<std::sync::Mutex<Sandbox>> =
    LazyLock::new(|| std::sync::Mutex::new(Sandbox::new()));

impl Sandbox {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let sandbox = tmp.path().to_path_buf();
        let root = sandbox.join("root");
        fs::create_dir_all(sandbox.join("outside")).unwrap();
        fs::create_dir_all(sandbox.join("root2")).unwrap();
        fs::write(sandbox.join("outside/secret"), OUTSIDE).unwrap();
        fs::write(sandbox.join("root2/secret"), OUTSIDE).unwrap();
        fs::write(sandbox.join("secret"), OUTSIDE).unwrap();
        let store = FileStore::new(root.to_str().unwrap());
        let reference = store
            .store("k", Bytes::from_static(b"ARTIFACT"), "text/plain")
            .unwrap();
        let artifact = reference.rsplit('/').next().unwrap().to_owned();
        fs::write(root.join(".metadata.json"), b"{}").unwrap();
        fs::write(root.join(".tmp-1-1"), b"TEMP").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(sandbox.join("outside"), root.join("link")).unwrap();
            std::os::unix::fs::symlink(sandbox.join("outside/secret"), root.join("secret"))
                .unwrap();
        }
        let mut protected = Vec::new();
        for path in [
            sandbox.join("outside/secret"),
            sandbox.join("root2/secret"),
            sandbox.join("secret"),
            root.join(&artifact),
            root.join(".metadata.journal"),
            root.join(".metadata.json"),
            root.join(".tmp-1-1"),
        ] {
            let content = fs::read(&path).unwrap();
            protected.push((path, content));
        }
        Sandbox {
            _tmp: tmp,
            sandbox,
            root,
            store,
            artifact,
            protected,
        }
    }

    /// Everything outside the store and every protected file is as it was.
    fn check(&self) -> Result<(), TestCaseError> {
        for (path, content) in &self.protected {
            prop_assert_eq!(
                &fs::read(path).unwrap(),
                content,
                "{} changed",
                path.display()
            );
        }
        let mut outside: Vec<_> = names(&self.sandbox);
        outside.sort();
        prop_assert_eq!(outside, ["outside", "root", "root2", "secret"]);
        prop_assert_eq!(names(&self.sandbox.join("outside")), ["secret"]);
        prop_assert_eq!(names(&self.sandbox.join("root2")), ["secret"]);
        // A write may replace a link in the store by a file (never following
        // it); put the links back so that later cases meet them again.
        #[cfg(unix)]
        for (name, target) in [("link", "outside"), ("secret", "outside/secret")] {
            let path = self.root.join(name);
            if !fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                let _ = fs::remove_file(&path);
                let _ = fs::remove_dir_all(&path);
                std::os::unix::fs::symlink(self.sandbox.join(target), &path).unwrap();
            }
        }
        Ok(())
    }
}

fn names(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

/// A key the store accepted names the same file everywhere.
fn assert_portable(key: &str) -> Result<(), TestCaseError> {
    for segment in key.split('/') {
        prop_assert!(
            !segment.is_empty() && segment != "." && segment != "..",
            "{key:?}"
        );
        prop_assert_eq!(segment_problem(segment), None, "{:?}", key);
    }
    Ok(())
}

fn accepted_or_invalid<T>(result: &Result<T, StorageError>) -> Result<(), TestCaseError> {
    if let Err(e) = result {
        prop_assert!(
            matches!(
                e,
                StorageError::InvalidKey(_)
                    | StorageError::KeyValue { .. }
                    | StorageError::NotFound { .. }
            ),
            "{e:?}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn file_store_never_escapes_or_reaches_its_own_files(op in op()) {
        let sandbox = SANDBOX.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let store = &sandbox.store;
        match &op {
            Op::Write(scope, key) => {
                let result = store.write_in(scope, key, PAYLOAD);
                accepted_or_invalid(&result)?;
            }
            Op::Read(scope, key) => {
                let result = store.read_in(scope, key);
                accepted_or_invalid(&result)?;
                if let Ok(Some(value)) = result {
                    prop_assert_eq!(&value[..], PAYLOAD, "{:?}", op);
                }
            }
            Op::Delete(scope, key) => accepted_or_invalid(&store.delete_in(scope, key))?,
            Op::List(scope, prefix) => {
                let result = store.list_in(scope, prefix);
                accepted_or_invalid(&result)?;
                for listed in result.unwrap_or_default() {
                    assert_portable(&listed)?;
                    let value = store.read_in(scope, &listed).unwrap();
                    prop_assert_eq!(value.as_deref(), Some(PAYLOAD), "{:?} listed {}", op, listed);
                }
            }
            Op::Retrieve(reference) => {
                for reference in [reference.clone(), format!("{}/{reference}", sandbox.root.display())] {
                    match store.retrieve(&reference) {
                        Ok(blob) => {
                            prop_assert_eq!(&blob.content[..], b"ARTIFACT", "{}", reference);
                            prop_assert!(reference.ends_with(&sandbox.artifact));
                        }
                        Err(e) => prop_assert!(e.is_not_found(), "{reference}: {e:?}"),
                    }
                }
            }
        }
        sandbox.check()?;
    }

    #[test]
    fn memory_store_keeps_only_portable_keys_apart_from_its_blobs(op in op()) {
        static MEMORY: LazyLock<MemoryStore> = LazyLock::new(|| {
            let store = MemoryStore::default();
            store.store("k", Bytes::from_static(b"ARTIFACT"), "text/plain").unwrap();
            store
        });
        let store: &MemoryStore = &MEMORY;
        match &op {
            Op::Write(_, key) => accepted_or_invalid(&KeyValueStore::write(store, key, Bytes::from_static(PAYLOAD)))?,
            Op::Read(_, key) => {
                if let Ok(Some(value)) = KeyValueStore::read(store, key) {
                    prop_assert_eq!(&value[..], PAYLOAD);
                }
            }
            Op::Delete(_, key) => accepted_or_invalid(&KeyValueStore::delete(store, key))?,
            Op::List(_, prefix) => {
                for listed in KeyValueStore::list(store, prefix).unwrap_or_default() {
                    assert_portable(&listed)?;
                }
            }
            Op::Retrieve(reference) => {
                if let Ok(blob) = store.retrieve(reference) {
                    prop_assert_eq!(&blob.content[..], b"ARTIFACT");
                }
            }
        }
        prop_assert_eq!(&store.retrieve("mem_1_k").unwrap().content[..], b"ARTIFACT");
    }
}
