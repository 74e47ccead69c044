//! Lines in order, each whole or cut, filling a budget.

use std::borrow::Cow;

use crate::budget::LineBudget;
use crate::cut::{fit_line, LineFit};
use crate::lines::display;
use crate::meter::{prefix_fit, Meter};

/// Lines shown in order from the first one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fill {
    /// The lines joined with `'\n'`.
    pub text: String,
    /// Whether every line is shown (whole or cut).
    pub complete: bool,
    /// Number of lines shown cut.
    pub cuts: usize,
}

/// What to do with the first line that does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Last {
    /// Show its longest start that fits, without a marker.
    Prefix,
    /// Leave it out.
    Drop,
}

/// Shows `lines` (without their `'\n'`; a trailing `'\r'` is not shown) in
/// order within `budget`, cutting lines longer than `limit`, until one does
/// not fit.
pub(crate) fn fill<'a>(
    lines: impl Iterator<Item = &'a str>,
    meter: &dyn Meter,
    budget: usize,
    limit: usize,
    last: Last,
) -> Fill {
    let mut room = LineBudget::for_text(budget, meter.measure("\n"));
    let mut shown: Vec<Cow<'a, str>> = Vec::new();
    let mut cuts = 0;
    let mut complete = true;
    for line in lines {
        let line = display(line);
        let Some(allowance) = room.allowance() else {
            complete = false;
            break;
        };
        match fit_line(meter, line, allowance, limit) {
            LineFit::Whole { cost } => {
                shown.push(Cow::Borrowed(line));
                room.spend(cost);
            }
            LineFit::Cut { text, cost } => {
                shown.push(Cow::Owned(text));
                room.spend(cost);
                cuts += 1;
            }
            LineFit::Stop => {
                if last == Last::Prefix {
                    let end = prefix_fit(meter, line, allowance);
                    if end > 0 {
                        shown.push(Cow::Borrowed(&line[..end]));
                    }
                }
                complete = false;
                break;
            }
        }
    }
    Fill {
        text: shown.join("\n"),
        complete,
        cuts,
    }
}

/// Smallest widening of the per-line limit worth another fill.
const MIN_WIDENING: usize = 8;

/// Like [`fill`], and when every line is shown but some are cut, shares what
/// is left of the budget among the cut lines (as long as every line still
/// shows). `lines` gives a fresh walk over the lines each time.
pub(crate) fn fill_widening<'a, I: Iterator<Item = &'a str>>(
    lines: impl Fn() -> I,
    meter: &dyn Meter,
    budget: usize,
    mut limit: usize,
    last: Last,
) -> Fill {
    let mut best = fill(lines(), meter, budget, limit, last);
    for _ in 0..2 {
        if !best.complete || best.cuts == 0 {
            break;
        }
        let more = budget.saturating_sub(meter.measure(&best.text)) / best.cuts;
        if more < MIN_WIDENING {
            break;
        }
        limit = limit.saturating_add(more);
        let wider = fill(lines(), meter, budget, limit, last);
        if !wider.complete {
            break;
        }
        best = wider;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Utf16Meter;

    #[test]
    fn fills_in_order_and_widens_cut_lines() {
        let long = "x".repeat(300);
        let lines = ["a", long.as_str(), "b"];
        let narrow = fill(lines.iter().copied(), &Utf16Meter, 100, 40, Last::Drop);
        assert!(narrow.complete);
        assert_eq!(narrow.cuts, 1);
        assert_eq!(Utf16Meter.measure(&narrow.text), 1 + 1 + 40 + 1 + 1);
        let wide = fill_widening(|| lines.iter().copied(), &Utf16Meter, 100, 40, Last::Drop);
        assert!(wide.complete);
        assert!(Utf16Meter.measure(&wide.text) >= 95, "{}", wide.text);
    }

    #[test]
    fn the_last_line_is_a_prefix_or_dropped() {
        let lines = ["abc", "defgh"];
        let prefix = fill(lines.iter().copied(), &Utf16Meter, 6, 40, Last::Prefix);
        assert_eq!((prefix.text.as_str(), prefix.complete), ("abc\nde", false));
        let dropped = fill(lines.iter().copied(), &Utf16Meter, 6, 40, Last::Drop);
        assert_eq!((dropped.text.as_str(), dropped.complete), ("abc", false));
    }
}
