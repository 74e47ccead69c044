//! Budget accounting for lines joined with `'\n'`.
//!
//! Lines `l1..ln` joined with `'\n'` measure `Σ measure(li) + (n-1)·nl`,
//! where `nl` is the measure of `"\n"`. Counting every line as
//! `measure(li) + nl` against a pool of `budget + nl` gives the same bound
//! without special-casing the last line.

/// Units left for a run of lines, each line paying for one newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineBudget {
    pool: usize,
    remaining: usize,
    newline: usize,
}

impl LineBudget {
    /// A budget for lines whose joined text must measure at most `budget`.
    pub fn for_text(budget: usize, newline: usize) -> Self {
        Self::from_pool(budget.saturating_add(newline), newline)
    }

    /// A budget of `pool` units that already includes the newline the last
    /// line does not have (see the module docs).
    pub fn from_pool(pool: usize, newline: usize) -> Self {
        Self {
            pool,
            remaining: pool,
            newline,
        }
    }

    /// Units the next line's text may measure, or `None` when not even its
    /// newline fits.
    pub fn allowance(&self) -> Option<usize> {
        self.remaining.checked_sub(self.newline)
    }

    /// Records a line of text measuring `cost`.
    pub fn spend(&mut self, cost: usize) {
        self.remaining = self
            .remaining
            .saturating_sub(cost.saturating_add(self.newline));
    }

    /// Units spent so far, newlines included.
    pub fn used(&self) -> usize {
        self.pool - self.remaining
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_pays_one_newline() {
        let mut b = LineBudget::for_text(10, 1);
        assert_eq!(b.allowance(), Some(10));
        b.spend(4);
        assert_eq!(b.allowance(), Some(5));
        b.spend(5);
        assert_eq!(b.allowance(), None);
        assert_eq!(b.used(), 11);
        let mut pool = LineBudget::from_pool(3, 1);
        pool.spend(1);
        assert_eq!(pool.allowance(), Some(0));
        pool.spend(0);
        assert_eq!(pool.allowance(), None);
    }
}
