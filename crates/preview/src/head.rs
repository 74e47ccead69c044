//! [`PreviewMode::Head`](crate::PreviewMode::Head): the longest start of the
//! blocks joined with `'\n'`.

use crate::cut::line_limit;
use crate::fill::{fill_widening, Last};
use crate::joined::Joined;
use crate::meter::Meter;
use crate::options::PreviewBlock;

/// The head preview of `blocks` within `budget`.
///
/// Without `cut_long_lines` this is the longest prefix of the joined text
/// that fits. With it, lines longer than the per-line limit are cut and
/// marked, lines are shown without a trailing `'\r'`, and the last line
/// shown may be a plain prefix of its line, filling the budget. When every
/// line shows, the cut lines share what is left.
pub(crate) fn preview(
    blocks: &[PreviewBlock<'_>],
    meter: &dyn Meter,
    budget: usize,
    cut_long_lines: bool,
) -> String {
    let joined = Joined::new(blocks);
    let fit = joined.fit_prefix(meter, budget);
    if fit == joined.len() || !cut_long_lines {
        return joined.prefix(fit).into_owned();
    }
    let limit = line_limit(budget, joined.count_lines_up_to(4));
    fill_widening(|| joined.lines(), meter, budget, limit, Last::Prefix).text
}
