//! Syntax tree of an ECMAScript regular expression (non-unicode mode).
//!
//! Literal characters are kept as UTF-16 code units, exactly as JavaScript
//! sees them; combining surrogate pairs is the translator's job.

/// A parsed pattern fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// Matches the empty string.
    Empty,
    /// One literal UTF-16 code unit.
    Unit(u16),
    /// A character class (`[...]`, `\d`, `\s`, `\w` and their negations).
    Class(ClassSpec),
    /// `.`: any code unit except line terminators.
    Dot,
    /// A zero-width assertion: `^`, `$`, `\b` or `\B`.
    Assert(Assertion),
    /// A group; `capture` is the 1-based capture index of capturing groups.
    Group {
        /// Capture index (1-based) or `None` for `(?:...)`.
        capture: Option<u32>,
        /// Group body.
        node: Box<Node>,
    },
    /// A look-around assertion.
    Look {
        /// `(?<=` / `(?<!` when true, `(?=` / `(?!` otherwise.
        behind: bool,
        /// Negative look-around.
        negate: bool,
        /// Asserted body.
        node: Box<Node>,
    },
    /// A back-reference to a capture group (1-based index).
    Backref(u32),
    /// A quantified term.
    Repeat {
        /// Quantified term.
        node: Box<Node>,
        /// Minimum count.
        min: u32,
        /// Maximum count, `None` for unbounded.
        max: Option<u32>,
        /// Greedy (`false` for the lazy `?` suffix).
        greedy: bool,
    },
    /// Terms in sequence.
    Concat(Vec<Node>),
    /// Alternatives.
    Alt(Vec<Node>),
}

impl Node {
    /// This node with `f` applied to each of its direct children (group and
    /// look-around bodies, quantified terms, sequence items, alternatives);
    /// leaves are returned unchanged.
    #[must_use]
    pub fn map_children(self, f: &mut impl FnMut(Node) -> Node) -> Node {
        match self {
            Node::Group { capture, node } => Node::Group { capture, node: Box::new(f(*node)) },
            Node::Look { behind, negate, node } => Node::Look { behind, negate, node: Box::new(f(*node)) },
            Node::Repeat { node, min, max, greedy } => Node::Repeat { node: Box::new(f(*node)), min, max, greedy },
            Node::Concat(v) => Node::Concat(v.into_iter().map(f).collect()),
            Node::Alt(v) => Node::Alt(v.into_iter().map(f).collect()),
            leaf => leaf,
        }
    }
}

/// Zero-width assertions that are not look-arounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assertion {
    /// `^` (start of the line being tested).
    Start,
    /// `$` (end of the line being tested).
    End,
    /// `\b` (ASCII word boundary).
    WordBoundary,
    /// `\B`.
    NotWordBoundary,
}

/// A character class as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSpec {
    /// `[^...]`.
    pub negated: bool,
    /// Class members in source order.
    pub items: Vec<ClassItem>,
}

/// One member of a character class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassItem {
    /// A single code unit.
    Unit(u16),
    /// An inclusive code unit range.
    Range(u16, u16),
    /// A predefined class escape.
    Predef(Predef),
}

/// Predefined class escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predef {
    /// `\d`
    Digit,
    /// `\D`
    NotDigit,
    /// `\s`
    Space,
    /// `\S`
    NotSpace,
    /// `\w`
    Word,
    /// `\W`
    NotWord,
}

impl Node {
    /// Whether the node or any descendant needs a backtracking engine
    /// (look-around or back-reference).
    pub fn needs_backtracking(&self) -> bool {
        match self {
            Node::Look { .. } | Node::Backref(_) => true,
            Node::Group { node, .. } | Node::Repeat { node, .. } => node.needs_backtracking(),
            Node::Concat(v) | Node::Alt(v) => v.iter().any(Node::needs_backtracking),
            _ => false,
        }
    }

    /// Whether the node can only ever match the empty string (it consists of
    /// assertions and empty groups).
    pub fn is_zero_width(&self) -> bool {
        match self {
            Node::Empty | Node::Assert(_) | Node::Look { .. } => true,
            Node::Group { node, .. } | Node::Repeat { node, .. } => node.is_zero_width(),
            Node::Concat(v) | Node::Alt(v) => v.iter().all(Node::is_zero_width),
            Node::Unit(_) | Node::Class(_) | Node::Dot | Node::Backref(_) => false,
        }
    }

    /// Whether the node contains a capturing group.
    pub fn has_capture(&self) -> bool {
        match self {
            Node::Group {
                capture: Some(_), ..
            } => true,
            Node::Group { node, .. } | Node::Repeat { node, .. } | Node::Look { node, .. } => {
                node.has_capture()
            }
            Node::Concat(v) | Node::Alt(v) => v.iter().any(Node::has_capture),
            _ => false,
        }
    }
}
