//! What to preview and how: modes, blocks and options.

use std::fmt;
use std::str::FromStr;

use crate::error::PreviewError;

/// How the preview of a tool result is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PreviewMode {
    /// The longest start of the blocks joined with `'\n'`.
    #[default]
    Head,
    /// Per block: its first and last lines, with a marker line naming the
    /// lines left out in between.
    HeadTail,
    /// Per block: an outline of a JSON document; other blocks as
    /// [`PreviewMode::HeadTail`].
    Structure,
}

impl PreviewMode {
    /// The mode's name as accepted by [`FromStr`]: `head`, `headTail` or
    /// `structure`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Head => "head",
            Self::HeadTail => "headTail",
            Self::Structure => "structure",
        }
    }
}

impl fmt::Display for PreviewMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PreviewMode {
    type Err = PreviewError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "head" => Ok(Self::Head),
            "headTail" => Ok(Self::HeadTail),
            "structure" => Ok(Self::Structure),
            other => Err(PreviewError::UnknownMode(other.to_owned())),
        }
    }
}

/// What a block of a tool result holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BlockKind {
    /// Plain text (which may still be a JSON document).
    #[default]
    Text,
    /// A JSON value stored as `JSON.stringify(value, null, 2)`.
    Json,
}

impl BlockKind {
    /// The kind's name as shown in block headers: `text` or `json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
        }
    }
}

/// One block of a tool result, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreviewBlock<'a> {
    /// What the block holds.
    pub kind: BlockKind,
    /// The block's stored text.
    pub text: &'a str,
}

impl<'a> PreviewBlock<'a> {
    /// A plain text block.
    pub fn text(text: &'a str) -> Self {
        Self {
            kind: BlockKind::Text,
            text,
        }
    }

    /// A JSON block (pretty-printed JSON text).
    pub fn json(text: &'a str) -> Self {
        Self {
            kind: BlockKind::Json,
            text,
        }
    }
}

/// Settings of one preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreviewOptions {
    /// How the preview is made.
    pub mode: PreviewMode,
    /// Size limit of the whole preview, in the units of the
    /// [`Meter`](crate::Meter) it is built with.
    pub budget: usize,
    /// In [`PreviewMode::Head`], cut lines longer than the per-line limit and
    /// show how much of them was left out. The other modes always do.
    pub cut_long_lines: bool,
}
