//! A bounded sample of a JSON document, built while scanning it.
//!
//! The tree keeps, for every object, its first [`MAX_KEYS`] members, and for
//! every array its first [`SAMPLE_HEAD`] elements and its last one, down to
//! level [`MAX_LEVEL`] (the root is level 0), and at most [`LEVEL_CAP`]
//! nodes per level. Counts (keys, elements) and line ranges of kept
//! containers are exact. Memory is bounded by these constants plus the
//! scanner's one byte per open container; the elements of an array after the
//! first few are sampled one at a time into the same slots, so time stays
//! linear in the document.

use super::scan::{scan, JsonError, Mark, Scalar, Sink};
use crate::format::count_chars;

/// Members kept per object.
pub(crate) const MAX_KEYS: usize = 64;
/// Leading elements kept per array (the last element is kept too).
pub(crate) const SAMPLE_HEAD: u64 = 4;
/// Deepest level kept; the root is level 0.
pub(crate) const MAX_LEVEL: usize = 16;
/// Nodes kept per level.
pub(crate) const LEVEL_CAP: usize = 2048;

/// No node.
pub(crate) const NONE: u32 = u32::MAX;

/// Kind of a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An object.
    Object,
    /// An array.
    Array,
    /// A string.
    String,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
}

/// A kept value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node<'a> {
    /// What the value is.
    pub kind: Kind,
    /// Its key, as written, when it is an object member.
    pub key: Option<&'a str>,
    /// Scalars: the value as written (a string without its quotes).
    pub raw: &'a str,
    /// Objects: number of members; arrays: number of elements; strings:
    /// characters as written between the quotes.
    pub count: u64,
    /// Containers: line of the opening bracket.
    pub first_line: u64,
    /// Containers: line of the closing bracket.
    pub last_line: u64,
    /// Containers: byte offset of the opening bracket.
    pub start: usize,
    /// Containers: length in bytes, brackets included.
    pub size: u64,
    /// First kept child.
    pub first_child: u32,
    /// Next kept sibling.
    pub next_sibling: u32,
    /// Nesting level (the root is 0).
    pub level: u16,
}

/// The kept part of a document.
#[derive(Debug)]
pub(crate) struct Tree<'a> {
    nodes: Vec<Node<'a>>,
    /// Number of lines of the document's text.
    pub lines: u64,
    /// Deepest level of a kept node.
    pub deepest: usize,
}

impl<'a> Tree<'a> {
    /// Scans `text` and keeps a bounded sample of it.
    pub fn build(text: &'a str) -> Result<Self, JsonError> {
        let mut builder = Builder::default();
        let lines = scan(text, &mut builder)?;
        Ok(Tree {
            nodes: builder.nodes,
            lines,
            deepest: builder.deepest,
        })
    }

    /// The root value.
    pub fn root(&self) -> Option<&Node<'a>> {
        self.nodes.first()
    }

    /// The node at `index` (the root is 0).
    pub fn node(&self, index: u32) -> &Node<'a> {
        &self.nodes[index as usize]
    }

    /// The kept children of the node at `index`, in document order.
    pub fn children(&self, index: u32) -> Children<'_, 'a> {
        Children {
            tree: self,
            next: self.node(index).first_child,
        }
    }
}

/// Iterator over kept children.
pub(crate) struct Children<'t, 'a> {
    tree: &'t Tree<'a>,
    next: u32,
}

impl Iterator for Children<'_, '_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.next == NONE {
            return None;
        }
        let current = self.next;
        self.next = self.tree.node(current).next_sibling;
        Some(current)
    }
}

/// An open container that is kept.
#[derive(Debug)]
struct Frame {
    node: u32,
    is_object: bool,
    /// Members or elements seen so far.
    count: u64,
    /// Last child linked so far.
    last_child: u32,
    /// Arrays: the latest element after the first few, linked at the end if
    /// it turns out to be the last one.
    pending: u32,
}

/// Builds a [`Tree`] from scanner events.
#[derive(Debug, Default)]
struct Builder<'a> {
    nodes: Vec<Node<'a>>,
    frames: Vec<Frame>,
    /// Nesting depth inside a container that is not kept.
    skipping: usize,
    /// Key of the member whose value comes next.
    key: Option<&'a str>,
    per_level: [usize; MAX_LEVEL + 1],
    deepest: usize,
}

impl<'a> Builder<'a> {
    /// Places a new value in its parent; returns its node if it is kept.
    fn place(&mut self, kind: Kind, raw: &'a str, at: Mark) -> Option<u32> {
        let key = self.key.take();
        let level = self.frames.len();
        let Some(frame) = self.frames.last_mut() else {
            return self.push(kind, None, raw, at, 0);
        };
        if level > MAX_LEVEL {
            if !frame.is_object {
                frame.count += 1;
            }
            return None;
        }
        let (parent, index, is_object, pending) =
            (frame.node, frame.count, frame.is_object, frame.pending);
        if is_object {
            // The member was counted when its key was read.
            if index > MAX_KEYS as u64 {
                return None;
            }
            let node = self.push(kind, key, raw, at, level)?;
            self.link(parent, node);
            return Some(node);
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.count += 1;
        }
        if index < SAMPLE_HEAD {
            let node = self.push(kind, None, raw, at, level)?;
            self.link(parent, node);
            return Some(node);
        }
        if pending != NONE {
            self.truncate(pending);
        }
        let node = self.push(kind, None, raw, at, level);
        if let Some(frame) = self.frames.last_mut() {
            frame.pending = node.unwrap_or(NONE);
        }
        node
    }

    /// Appends a node if its level has room.
    fn push(
        &mut self,
        kind: Kind,
        key: Option<&'a str>,
        raw: &'a str,
        at: Mark,
        level: usize,
    ) -> Option<u32> {
        let slot = self.per_level.get_mut(level)?;
        if *slot >= LEVEL_CAP {
            return None;
        }
        let index = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&i| i != NONE)?;
        *slot += 1;
        self.deepest = self.deepest.max(level);
        let count = if kind == Kind::String {
            count_chars(raw)
        } else {
            0
        };
        self.nodes.push(Node {
            kind,
            key,
            raw,
            count,
            first_line: at.line,
            last_line: at.line,
            start: at.offset,
            size: 0,
            first_child: NONE,
            next_sibling: NONE,
            level: u16::try_from(level).unwrap_or(u16::MAX),
        });
        Some(index)
    }

    /// Links `node` as the last kept child of the innermost open container
    /// (`parent`).
    fn link(&mut self, parent: u32, node: u32) {
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        if frame.last_child == NONE {
            self.nodes[parent as usize].first_child = node;
        } else {
            self.nodes[frame.last_child as usize].next_sibling = node;
        }
        frame.last_child = node;
    }

    /// Drops the node at `from` and everything after it: a sampled element
    /// that turned out not to be the last one, with its subtree.
    fn truncate(&mut self, from: u32) {
        let from = from as usize;
        for node in self.nodes.get(from..).unwrap_or_default() {
            if let Some(slot) = self.per_level.get_mut(usize::from(node.level)) {
                *slot -= 1;
            }
        }
        self.nodes.truncate(from);
    }

    fn begin(&mut self, kind: Kind, at: Mark) {
        if self.skipping > 0 {
            self.skipping += 1;
            return;
        }
        match self.place(kind, "", at) {
            Some(node) => self.frames.push(Frame {
                node,
                is_object: kind == Kind::Object,
                count: 0,
                last_child: NONE,
                pending: NONE,
            }),
            None => self.skipping = 1,
        }
    }

    fn end(&mut self, at: Mark) {
        if self.skipping > 0 {
            self.skipping -= 1;
            return;
        }
        let Some(frame) = self.frames.last() else {
            return;
        };
        let (node, count, pending) = (frame.node, frame.count, frame.pending);
        if pending != NONE {
            self.link(node, pending);
        }
        self.frames.pop();
        let node = &mut self.nodes[node as usize];
        node.count = count;
        node.last_line = at.line;
        node.size = u64::try_from(at.offset + 1 - node.start.min(at.offset)).unwrap_or(u64::MAX);
    }
}

impl<'a> Sink<'a> for Builder<'a> {
    fn begin_object(&mut self, at: Mark) {
        self.begin(Kind::Object, at);
    }

    fn key(&mut self, raw: &'a str) {
        if self.skipping > 0 {
            return;
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.count += 1;
        }
        self.key = Some(raw);
    }

    fn end_object(&mut self, at: Mark) {
        self.end(at);
    }

    fn begin_array(&mut self, at: Mark) {
        self.begin(Kind::Array, at);
    }

    fn end_array(&mut self, at: Mark) {
        self.end(at);
    }

    fn scalar(&mut self, kind: Scalar, raw: &'a str) {
        if self.skipping > 0 {
            return;
        }
        let kind = match kind {
            Scalar::Null => Kind::Null,
            Scalar::Bool => Kind::Bool,
            Scalar::Number => Kind::Number,
            Scalar::String => Kind::String,
        };
        self.place(kind, raw, Mark { line: 0, offset: 0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys<'a>(tree: &Tree<'a>, node: u32) -> Vec<&'a str> {
        tree.children(node)
            .filter_map(|c| tree.node(c).key)
            .collect()
    }

    #[test]
    fn keeps_counts_lines_sizes_and_samples() {
        let text = "{\n  \"a\": [\n    1,\n    2,\n    3,\n    4,\n    5\n  ],\n  \"b\": \"xé\"\n}";
        let tree = Tree::build(text).expect("valid");
        let root = tree.root().expect("root");
        assert_eq!(
            (root.kind, root.count, root.first_line, root.last_line),
            (Kind::Object, 2, 1, 10)
        );
        assert_eq!((root.start, root.size), (0, text.len() as u64));
        assert_eq!(keys(&tree, 0), ["a", "b"]);
        let a = tree.children(0).next().expect("a");
        let a_node = tree.node(a);
        let a_text = &text[a_node.start..a_node.start + a_node.size as usize];
        assert!(a_text.starts_with('[') && a_text.ends_with(']'), "{a_text}");
        assert_eq!(
            (
                a_node.kind,
                a_node.count,
                a_node.first_line,
                a_node.last_line
            ),
            (Kind::Array, 5, 2, 8)
        );
        let sample: Vec<&str> = tree.children(a).map(|c| tree.node(c).raw).collect();
        assert_eq!(sample, ["1", "2", "3", "4", "5"]);
        let b = tree.children(0).nth(1).expect("b");
        assert_eq!(
            (tree.node(b).kind, tree.node(b).raw, tree.node(b).count),
            (Kind::String, "xé", 2)
        );
        assert_eq!(tree.lines, 10);
    }

    #[test]
    fn sampling_keeps_memory_bounded() {
        let element = "{\"id\":1,\"tags\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}";
        let text = format!("[{}]", vec![element; 10_000].join(","));
        let tree = Tree::build(&text).expect("valid");
        // root + 5 sampled objects, each with 2 members and 5 sampled tags
        assert_eq!(tree.nodes.len(), 1 + 5 * (1 + 2 + 5));
        assert_eq!(tree.root().map(|r| r.count), Some(10_000));
    }

    #[test]
    fn wide_objects_keep_their_first_keys() {
        let members: Vec<String> = (0..1000).map(|i| format!("\"k{i}\":{i}")).collect();
        let text = format!("{{{}}}", members.join(","));
        let tree = Tree::build(&text).expect("valid");
        assert_eq!(tree.root().map(|r| r.count), Some(1000));
        assert_eq!(keys(&tree, 0).len(), MAX_KEYS);
        assert_eq!(keys(&tree, 0)[63], "k63");
    }

    #[test]
    fn deep_documents_keep_their_top() {
        let depth = 100_000;
        let text = "[".repeat(depth) + &"]".repeat(depth);
        let tree = Tree::build(&text).expect("valid");
        assert_eq!(tree.deepest, MAX_LEVEL);
        assert_eq!(tree.nodes.len(), MAX_LEVEL + 1);
    }
}
