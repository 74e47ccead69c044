//! [`PreviewMode::HeadTail`](crate::PreviewMode::HeadTail) for one block: its
//! first and last lines around a marker line naming the lines left out.

use std::borrow::Cow;

use crate::budget::LineBudget;
use crate::cut::{fit_line, line_limit, LineFit};
use crate::fill::{fill_widening, Last};
use crate::format::{omission_marker, widest_omission_marker};
use crate::lines::{count_lines, display, without_carriage_returns, Backward, Forward, Line};
use crate::meter::{fits_whole, prefix_fit, Meter};
use crate::options::{HeadShare, PreviewBlock};

/// A line chosen for the preview.
struct Shown<'a> {
    number: u64,
    text: Cow<'a, str>,
}

/// The head-and-tail preview of `block` within `budget` (see [`block`]), as a
/// section renderer.
pub(crate) fn section(
    block: &PreviewBlock<'_>,
    meter: &dyn Meter,
    budget: usize,
    share: HeadShare,
) -> String {
    self::block(block.text, meter, budget, share)
}

/// The head-and-tail preview of one block's `text` within `budget`.
///
/// A block that fits is shown whole. Otherwise, lines longer than the
/// per-line limit are cut and marked; when every line then fits, they are
/// all shown (the cut lines sharing what is left). Otherwise `share` of the
/// budget (after the marker line) goes to the first lines and the rest to
/// the last lines; budget one side does not use goes to the other. A marker
/// line between the two sides names the lines left out, with the block's own
/// 1-based line numbers.
pub(crate) fn block(text: &str, meter: &dyn Meter, budget: usize, share: HeadShare) -> String {
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
    select(text, meter, budget, total, limit, share)
}

/// The first and last lines of `text` (of `total` lines, which do not all
/// fit `budget`) around a marker naming the lines left out: first lines
/// within `share` of what the marker leaves, last lines within the rest, then
/// more first lines within what the last lines did not use.
fn select(
    text: &str,
    meter: &dyn Meter,
    budget: usize,
    total: u64,
    limit: usize,
    share: HeadShare,
) -> String {
    let newline = meter.measure("\n");
    let reserve = meter
        .measure(&widest_omission_marker(total))
        .saturating_add(newline);
    let Some(pool) = budget.saturating_add(newline).checked_sub(reserve) else {
        return first_line(text, meter, budget);
    };

    let mut forward = Forward::new(text).peekable();
    let mut head = Vec::new();
    let mut head_budget = LineBudget::from_pool(share.part_of(pool), newline);
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::cut::line_limit;
    use crate::meter::Utf16Meter;

    fn numbered(lines: u64) -> String {
        (1..=lines)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn share(value: f64) -> HeadShare {
        HeadShare::new(value).unwrap()
    }

    fn preview(text: &str, budget: usize, head: f64) -> String {
        let out = block(text, &Utf16Meter, budget, share(head));
        assert!(Utf16Meter.measure(&out) <= budget, "{out:?} over {budget}");
        out
    }

    /// `line a` to `line b` joined with '\n'.
    fn lines(a: u64, b: u64) -> String {
        (a..=b)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_share_of_0_gives_everything_to_the_tail() {
        let out = preview(&numbered(1000), 200, 0.0);
        assert_eq!(
            out,
            format!(
                "[… 983 lines omitted (lines 1-983) …]\n{}",
                lines(984, 1000)
            )
        );
    }

    #[test]
    fn a_share_of_a_tenth() {
        let out = preview(&numbered(1000), 200, 0.1);
        assert_eq!(
            out,
            format!(
                "{}\n[… 983 lines omitted (lines 3-985) …]\n{}",
                lines(1, 2),
                lines(986, 1000)
            )
        );
    }

    #[test]
    fn a_share_of_a_half() {
        let out = preview(&numbered(1000), 200, 0.5);
        assert_eq!(
            out,
            format!(
                "{}\n[… 981 lines omitted (lines 11-991) …]\n{}",
                lines(1, 10),
                lines(992, 1000)
            )
        );
        assert_eq!(
            block(&numbered(1000), &Utf16Meter, 200, HeadShare::default()),
            out
        );
    }

    #[test]
    fn a_share_of_nine_tenths() {
        let out = preview(&numbered(1000), 200, 0.9);
        assert_eq!(
            out,
            format!(
                "{}\n[… 980 lines omitted (lines 19-998) …]\n{}",
                lines(1, 18),
                lines(999, 1000)
            )
        );
    }

    #[test]
    fn a_share_of_1_gives_everything_to_the_head() {
        let out = preview(&numbered(1000), 200, 1.0);
        assert_eq!(
            out,
            format!("{}\n[… 980 lines omitted (lines 21-1,000) …]", lines(1, 20))
        );
    }

    #[test]
    fn budget_one_side_does_not_use_goes_to_the_other() {
        // Short first lines and long last ones, and the other way round: the
        // side with few lines leaves its budget to the other.
        let short_then_long = format!(
            "a\nb\n{}",
            (0..100)
                .map(|i| format!("{i:03}{}", "x".repeat(20)))
                .collect::<Vec<_>>()
                .join("\n")
        );
        for head in [0.0, 0.5, 1.0] {
            let out = preview(&short_then_long, 300, head);
            assert!(Utf16Meter.measure(&out) > 270, "{head}: {out}");
        }
        // With a share of 1, what is left after the first lines (less than
        // the next one) goes to the last line when it fits; with a share of
        // 0, what the last lines leave goes to the first line.
        let middle = vec!["x".repeat(20); 100].join("\n");
        let head_then_end = format!("{middle}\nend");
        let start_then_tail = format!("start\n{middle}");
        let (mut ends, mut starts) = (0, 0);
        for budget in 100..160 {
            let out = preview(&head_then_end, budget, 1.0);
            assert!(out.starts_with(&"x".repeat(20)), "{out}");
            ends += usize::from(out.ends_with("…]\nend"));
            let out = preview(&start_then_tail, budget, 0.0);
            assert!(out.ends_with(&"x".repeat(20)), "{out}");
            starts += usize::from(out.starts_with("start\n[…"));
        }
        assert!(ends > 20 && starts > 20, "{ends} {starts}");
    }

    #[test]
    fn two_thirds_of_a_pool_are_exact() {
        let two_thirds = share(2.0 / 3.0);
        for pool in (0..100_000).chain([u32::MAX as usize - 7, u32::MAX as usize - 1]) {
            assert_eq!(two_thirds.part_of(pool), pool * 2 / 3, "{pool}");
        }
        for pool in [0, 1, 7, 1000, usize::MAX] {
            assert_eq!(share(0.0).part_of(pool), 0);
            assert_eq!(share(1.0).part_of(pool), pool);
            assert_eq!(share(0.5).part_of(pool), pool / 2);
        }
    }

    fn text_line() -> impl Strategy<Value = String> {
        let chars = prop::sample::select(vec!['a', 'Z', '0', ' ', ',', '\r', 'é', '😀', '-']);
        prop_oneof![
            12 => prop::collection::vec(chars.clone(), 0..40).prop_map(String::from_iter),
            1 => prop::collection::vec(chars, 60..600).prop_map(String::from_iter),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(text_line(), 2..300).prop_map(|lines| lines.join("\n"))
    }

    fn head_share() -> impl Strategy<Value = f64> {
        prop_oneof![Just(0.0), Just(1.0), Just(0.5), 0.0..=1.0f64]
    }

    /// Measure of lines joined with '\n', each paying for one newline.
    fn cost(lines: &[&str]) -> usize {
        lines.iter().map(|l| Utf16Meter.measure(l) + 1).sum()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn each_side_gets_its_share_within_one_line(
            text in text(),
            budget in 0usize..1500,
            head in head_share(),
        ) {
            let share = share(head);
            let out = block(&text, &Utf16Meter, budget, share);
            prop_assert!(Utf16Meter.measure(&out) <= budget, "{} > {budget}: {out:?}", Utf16Meter.measure(&out));
            let shown: Vec<&str> = out.split('\n').collect();
            let Some(at) = shown.iter().position(|l| l.starts_with("[… ") && l.ends_with(" …]")) else {
                return Ok(());
            };
            // Lines were left out between the two sides: each stopped for
            // lack of budget, one line (at most the per-line limit) short of
            // its part at most.
            let total = count_lines(&text);
            let pool = budget - Utf16Meter.measure(&widest_omission_marker(total));
            let line = line_limit(budget, total) + 1;
            let head_part = share.part_of(pool);
            let (head_cost, tail_cost) = (cost(&shown[..at]), cost(&shown[at + 1..]));
            prop_assert!(head_cost + tail_cost <= pool);
            prop_assert!(head_cost + line > head_part, "head {head_cost} of {head_part} (pool {pool}): {out:?}");
            prop_assert!(tail_cost + line > pool - head_part, "tail {tail_cost} of {} (pool {pool}): {out:?}", pool - head_part);
        }
    }
}
