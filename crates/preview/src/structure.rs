//! [`PreviewMode::Structure`](crate::PreviewMode::Structure) for one block:
//! an outline of a JSON document, or head and tail of anything else.

use crate::head_tail;
use crate::json;
use crate::meter::{fits_whole, Meter};
use crate::options::{BlockKind, HeadShare, PreviewBlock};

/// The structure preview of one block within `budget`.
///
/// A block that fits is shown whole. A JSON block, or a text block whose
/// first non-whitespace character is `{` or `[`, that holds one valid JSON
/// document with an object or array at its root is outlined; anything else
/// is previewed as [`head_tail::block`] with the head's `share`.
pub(crate) fn block(
    block: &PreviewBlock<'_>,
    meter: &dyn Meter,
    budget: usize,
    share: HeadShare,
) -> String {
    if budget == 0 {
        return String::new();
    }
    if !fits_whole(meter, block.text, budget) && may_be_json(block) {
        if let Some(outline) = json::outline(block.text, meter, budget) {
            return outline;
        }
    }
    head_tail::block(block.text, meter, budget, share)
}

/// Whether `block` is worth parsing as JSON.
fn may_be_json(block: &PreviewBlock<'_>) -> bool {
    block.kind == BlockKind::Json
        || matches!(
            block
                .text
                .bytes()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')),
            Some(b'{' | b'[')
        )
}
