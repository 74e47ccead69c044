//! One section per block, sharing the budget, for the modes that preview
//! blocks separately.

use crate::format::block_header;
use crate::meter::Meter;
use crate::options::PreviewBlock;

/// The sections of `blocks` within `budget`, each body rendered by `body`
/// within a budget.
///
/// A single block is rendered alone. With several, each section starts with
/// a `[block i of n: kind]` header line; after the headers, each block gets
/// an equal share of what is left, and what a block does not use goes to the
/// blocks after it.
pub(crate) fn render(
    blocks: &[PreviewBlock<'_>],
    meter: &dyn Meter,
    budget: usize,
    body: impl Fn(&PreviewBlock<'_>, &dyn Meter, usize) -> String,
) -> String {
    if let [only] = blocks {
        return body(only, meter, budget);
    }
    let newline = meter.measure("\n");
    let headers: Vec<String> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| block_header(i, blocks.len(), b.kind))
        .collect();
    let fixed = headers
        .iter()
        .map(|h| meter.measure(h))
        .fold(0usize, usize::saturating_add)
        .saturating_add(newline.saturating_mul(blocks.len().saturating_sub(1)));
    let mut pool = budget.saturating_sub(fixed);
    let mut out = String::new();
    for (i, (block, header)) in blocks.iter().zip(&headers).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(header);
        let share = pool / (blocks.len() - i);
        let body_budget = share.saturating_sub(newline);
        if body_budget == 0 {
            continue;
        }
        let text = body(block, meter, body_budget);
        if !text.is_empty() {
            out.push('\n');
            out.push_str(&text);
            pool = pool.saturating_sub(meter.measure(&text).saturating_add(newline));
        }
    }
    out
}
