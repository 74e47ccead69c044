//! Choosing the most detailed outline of a JSON document that fits a budget.

use std::collections::HashMap;

use super::render::{render, Limits, LineSink, Overflow};
use super::tree::{Kind, Tree, MAX_KEYS, MAX_LEVEL};
use crate::budget::LineBudget;
use crate::meter::{prefix_fit, Meter};

/// The outline of the JSON document `text` within `budget`, or `None` when
/// `text` is not one valid JSON document with an object or array at its
/// root.
///
/// Outlines are tried from the most detailed down (fewer keys per object,
/// then small containers collapsed, then fewer levels, down to the root
/// collapsed); the first that fits is returned. When none does, the least
/// detailed one is cut to its longest start that fits.
pub(crate) fn outline(text: &str, meter: &dyn Meter, budget: usize) -> Option<String> {
    let tree = Tree::build(text).ok()?;
    let root_kind = tree.root()?.kind;
    if !matches!(root_kind, Kind::Object | Kind::Array) {
        return None;
    }
    let newline = meter.measure("\n");
    let mut costs = HashMap::new();
    let full = tree.deepest.clamp(1, MAX_LEVEL);
    let least = if root_kind == Kind::Array { 2 } else { 1 }.min(full);
    let size = u64::try_from(text.len()).unwrap_or(u64::MAX);
    let steps = ladder(full, least, size);
    for &limits in &steps {
        let mut lines = Budgeted::new(meter, &mut costs, budget, newline);
        if render(&tree, limits, &mut lines).is_ok() {
            return Some(lines.lines.join("\n"));
        }
    }
    let mut all = Collected::default();
    let smallest = Limits {
        keys: 0,
        depth: 0,
        min_bytes: 0,
    };
    render(&tree, smallest, &mut all).ok()?;
    let mut lines = Budgeted::new(meter, &mut costs, budget, newline);
    for line in &all.0 {
        if lines.push(line.clone()).is_err() {
            break;
        }
    }
    if lines.lines.is_empty() {
        let first = all.0.first()?;
        return Some(first[..prefix_fit(meter, first, budget)].to_owned());
    }
    Some(lines.lines.join("\n"))
}

/// The outlines to try, most detailed first, for a document of `size`
/// bytes. `full` shows every kept level; `least` is the fewest levels worth
/// showing (one below the root, two for an array root so that its elements'
/// members show).
///
/// Containers are collapsed smallest first (below 1/256 of the document,
/// then 1/64, 1/16, 1/4), so that the parts holding most of the data keep
/// their detail longest; then whole levels go.
fn ladder(full: usize, least: usize, size: u64) -> Vec<Limits> {
    let step = |keys, depth, min_bytes| Limits {
        keys,
        depth,
        min_bytes,
    };
    let floor = least.max(2).min(full);
    let large = size / 4;
    let mut steps = vec![
        step(MAX_KEYS, full, 0),
        step(32, full, 0),
        step(16, full, 0),
    ];
    steps.extend([256, 64, 16, 4].map(|part| step(16, full, size / part)));
    steps.extend((floor..full).rev().map(|depth| step(16, depth, large)));
    steps.push(step(8, floor, large));
    if least < floor {
        steps.extend([step(32, least, 0), step(16, least, 0), step(8, least, 0)]);
    }
    steps.extend([
        step(4, least, 0),
        step(2, least, 0),
        step(1, least, 0),
        step(0, 0, 0),
    ]);
    steps.dedup();
    steps
}

/// Takes lines while they fit a budget, measuring each distinct line once.
struct Budgeted<'m, 'c> {
    meter: &'m dyn Meter,
    costs: &'c mut HashMap<String, usize>,
    budget: LineBudget,
    lines: Vec<String>,
}

impl<'m, 'c> Budgeted<'m, 'c> {
    fn new(
        meter: &'m dyn Meter,
        costs: &'c mut HashMap<String, usize>,
        budget: usize,
        newline: usize,
    ) -> Self {
        Self {
            meter,
            costs,
            budget: LineBudget::for_text(budget, newline),
            lines: Vec::new(),
        }
    }
}

impl LineSink for Budgeted<'_, '_> {
    fn push(&mut self, line: String) -> Result<(), Overflow> {
        let cost = match self.costs.get(&line) {
            Some(&cost) => cost,
            None => {
                let cost = self.meter.measure(&line);
                self.costs.insert(line.clone(), cost);
                cost
            }
        };
        if self
            .budget
            .allowance()
            .is_none_or(|allowance| cost > allowance)
        {
            return Err(Overflow);
        }
        self.budget.spend(cost);
        self.lines.push(line);
        Ok(())
    }
}

/// Takes every line.
#[derive(Default)]
struct Collected(Vec<String>);

impl LineSink for Collected {
    fn push(&mut self, line: String) -> Result<(), Overflow> {
        self.0.push(line);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_goes_from_most_to_least_detail() {
        let steps = ladder(4, 1, 1024);
        let triples: Vec<(usize, usize, u64)> = steps
            .iter()
            .map(|l| (l.keys, l.depth, l.min_bytes))
            .collect();
        assert_eq!(
            triples,
            [
                (64, 4, 0),
                (32, 4, 0),
                (16, 4, 0),
                (16, 4, 4),
                (16, 4, 16),
                (16, 4, 64),
                (16, 4, 256),
                (16, 3, 256),
                (16, 2, 256),
                (8, 2, 256),
                (32, 1, 0),
                (16, 1, 0),
                (8, 1, 0),
                (4, 1, 0),
                (2, 1, 0),
                (1, 1, 0),
                (0, 0, 0)
            ]
        );
        let steps = ladder(1, 1, 10);
        assert_eq!(steps.first().map(|l| l.depth), Some(1));
    }
}
