//! Helpers shared by the storage integration tests.
#![allow(dead_code)]

use std::fs;
use std::path::Path;

/// Sorted names of the entries of `dir` that do not start with `.`.
pub fn visible_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = all_names(dir)
        .into_iter()
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Sorted names of all entries of `dir`.
pub fn all_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The file name part of a reference.
pub fn file_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap()
}

/// `dir` as a `&str`.
pub fn s(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

/// A store under test, and the directory that keeps a file store alive.
pub struct Subject {
    pub store: Box<dyn offload_storage::Lifecycle>,
    pub dir: Option<tempfile::TempDir>,
    pub name: &'static str,
}

/// A memory store and a file store (in a new directory), both with `policy`.
pub fn subjects(policy: offload_storage::Policy) -> Vec<Subject> {
    use offload_storage::{FileStore, Lifecycle, MemoryStore};
    let memory = MemoryStore::new(None).unwrap();
    memory.set_policy(policy).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = FileStore::new(dir.path().to_str().unwrap());
    file.set_policy(policy).unwrap();
    vec![
        Subject { store: Box::new(memory), dir: None, name: "memory" },
        Subject { store: Box::new(file), dir: Some(dir), name: "file" },
    ]
}
