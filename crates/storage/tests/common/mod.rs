//! Helpers shared by the file-store integration tests.
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
