//! [`PreviewMode::HeadTail`](crate::PreviewMode::HeadTail) for one block: its
//! first and last lines around a marker line naming the lines left out.

use std::borrow::Cow;

use crate::budget::LineBudget;
use crate::cut::{fit_line, line_limit, LineFit};
use crate::fill::{fill_widening, Last};
use crate::format::{omission_marker, widest_omission_marker};
use crate::lines::{count_lines, display, without_carriage_returns, Backward, Forward, Line};
use crate::meter::{fits_whole, prefix_fit, Meter};
use crate::options::PreviewBlock;

/// A line chosen for the preview.
struct Shown<'a> {
    number: u64,
    text: Cow<'a, str>,
}

/// The head-and-tail preview of `block` within `budget` (see [`block`]), as a
/// section renderer.
pub(crate) fn section(block: &PreviewBlock<'_>, meter: &dyn Meter, budget: usize) -> String {
    self::block(block.text, meter, budget)
}

/// The head-and-tail preview of one block's `text` within `budget`.
///
/// A block that fits is shown whole. Otherwise, lines longer than the
/// per-line limit are cut and marked; when every line then fits, they are
/// all shown (the cut lines sharing what is left). Otherwise about two
/// thirds of the budget go to the first lines and the rest to the last
/// lines; budget one side does not use goes to the other. A marker line
/// between the two sides names the lines left out, with the block's own
/// 1-based line numbers.
pub(crate) fn block(text: &str, meter: &dyn Meter, budget: usize) -> String {
    if budget == 0 {
        return String::new();
    }
    if fits_whole(meter, text, budget) {
        return without_carriage_returns(text);
    }
    let total = count_lines(text);
    if total == 1 {
        return single_line(meter, display(text), budget);
    }
    let limit = line_limit(budget, total);
    let all = fill_widening(
        || Forward::new(text).map(|l| l.text),
        meter,
        budget,
        limit,
        Last::Drop,
    );
    if all.complete {
        return all.text;
    }
    select(text, meter, budget, total, limit)
}

/// The first and last lines of `text` (of `total` lines, which do not all
/// fit `budget`) around a marker naming the lines left out.
fn select(text: &str, meter: &dyn Meter, budget: usize, total: u64, limit: usize) -> String {
    let newline = meter.measure("\n");
    let reserve = meter
        .measure(&widest_omission_marker(total))
        .saturating_add(newline);
    let Some(pool) = budget.saturating_add(newline).checked_sub(reserve) else {
        return first_line(text, meter, budget);
    };

    let mut forward = Forward::new(text).peekable();
    let mut head = Vec::new();
    let mut head_budget = LineBudget::from_pool(pool * 2 / 3, newline);
    take(
        &mut forward,
        &mut head,
        &mut head_budget,
        meter,
        limit,
        |n| n <= total,
    );
    let head_last = head.last().map_or(0, |l: &Shown<'_>| l.number);

    let mut tail = Vec::new();
    let mut tail_budget = LineBudget::from_pool(pool - head_budget.used(), newline);
    let mut backward = Backward::new(text, total).peekable();
    take(
        &mut backward,
        &mut tail,
        &mut tail_budget,
        meter,
        limit,
        |n| n > head_last,
    );
    let tail_first = tail.last().map_or(total + 1, |l: &Shown<'_>| l.number);

    let left = pool - head_budget.used() - tail_budget.used();
    let mut rest_budget = LineBudget::from_pool(left, newline);
    take(
        &mut forward,
        &mut head,
        &mut rest_budget,
        meter,
        limit,
        |n| n < tail_first,
    );

    if head.is_empty() && tail.is_empty() {
        return first_line(text, meter, budget);
    }
    let head_last = head.last().map_or(0, |l| l.number);
    let mut parts: Vec<Cow<'_, str>> = head.into_iter().map(|l| l.text).collect();
    if head_last + 1 < tail_first {
        parts.push(omission_marker(head_last + 1, tail_first - 1).into());
    }
    parts.extend(tail.into_iter().rev().map(|l| l.text));
    parts.join("\n")
}

/// Moves lines from `lines` to `shown` while they fit `budget` and `wanted`
/// accepts their number; a line that does not fit stays in `lines`.
fn take<'a, I: Iterator<Item = Line<'a>>>(
    lines: &mut std::iter::Peekable<I>,
    shown: &mut Vec<Shown<'a>>,
    budget: &mut LineBudget,
    meter: &dyn Meter,
    limit: usize,
    wanted: impl Fn(u64) -> bool,
) {
    while let Some(line) = lines.peek() {
        if !wanted(line.number) {
            return;
        }
        let number = line.number;
        let text = line.display();
        let Some(allowance) = budget.allowance() else {
            return;
        };
        let text = match fit_line(meter, text, allowance, limit) {
            LineFit::Whole { cost } => {
                budget.spend(cost);
                Cow::Borrowed(text)
            }
            LineFit::Cut { text, cost } => {
                budget.spend(cost);
                Cow::Owned(text)
            }
            LineFit::Stop => return,
        };
        shown.push(Shown { number, text });
        lines.next();
    }
}

/// The first line of `text` within `budget`, for budgets too small for
/// anything else.
fn first_line(text: &str, meter: &dyn Meter, budget: usize) -> String {
    let first = Forward::new(text).next().map_or("", |l| l.display());
    single_line(meter, first, budget)
}

/// A single line within `budget`: whole, cut with a marker, or (when not
/// even a marker fits) its longest prefix.
fn single_line(meter: &dyn Meter, line: &str, budget: usize) -> String {
    match fit_line(meter, line, budget, budget) {
        LineFit::Whole { .. } => line.to_owned(),
        LineFit::Cut { text, .. } => text,
        LineFit::Stop => line[..prefix_fit(meter, line, budget)].to_owned(),
    }
}
