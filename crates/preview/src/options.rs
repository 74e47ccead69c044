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

/// The share of a block's preview budget given to its first lines in a
/// head-and-tail preview ([`PreviewMode::HeadTail`], and the fallback of
/// [`PreviewMode::Structure`] for blocks that are not JSON): a finite number
/// from 0 (everything to the last lines) to 1 (everything to the first
/// lines). Budget one side does not use goes to the other.
///
/// The default is one half.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadShare(f64);

/// Fixed-point scale of a [`HeadShare`] when splitting a budget.
const SHARE_SCALE: f64 = (1u64 << 32) as f64;

impl HeadShare {
    /// Half to the first lines, half to the last.
    pub const HALF: Self = Self(0.5);

    /// `share` as a head share; an error unless it is finite and in `0..=1`.
    pub fn new(share: f64) -> Result<Self, PreviewError> {
        if share.is_finite() && (0.0..=1.0).contains(&share) {
            // -0.0 is stored as 0.0.
            Ok(Self(share + 0.0))
        } else {
            Err(PreviewError::InvalidHeadShare(share))
        }
    }

    /// The share, from 0 to 1.
    pub fn get(self) -> f64 {
        self.0
    }

    /// The head's part of `pool` units, rounded down: `floor(pool × share)`,
    /// computed with the share rounded to 32 fractional bits (so that with a
    /// share of 2/3 the part of any pool below 2³² units is exactly
    /// `pool * 2 / 3`). 0 for a share of 0, `pool` for a share of 1.
    pub(crate) fn part_of(self, pool: usize) -> usize {
        // Finite and in 0..=1, so the scaled share is in 0..=2^32.
        let scaled = (self.0 * SHARE_SCALE).round() as u128;
        let part = (pool as u128 * scaled) >> 32;
        usize::try_from(part).unwrap_or(pool).min(pool)
    }
}

impl Default for HeadShare {
    fn default() -> Self {
        Self::HALF
    }
}

// Never NaN (and -0.0 is stored as 0.0), so equality is total.
impl Eq for HeadShare {}

impl TryFrom<f64> for HeadShare {
    type Error = PreviewError;

    fn try_from(share: f64) -> Result<Self, Self::Error> {
        Self::new(share)
    }
}

impl From<HeadShare> for f64 {
    fn from(share: HeadShare) -> Self {
        share.0
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
    /// In [`PreviewMode::HeadTail`] (and for the blocks
    /// [`PreviewMode::Structure`] previews the same way), the share of a
    /// block's budget given to its first lines.
    pub head_share: HeadShare,
}
