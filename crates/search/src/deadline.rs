//! The time budget of one search.

use std::time::{Duration, Instant};

use crate::error::SearchError;

/// How long a search may run.
pub const SEARCH_TIME_BUDGET: Duration = Duration::from_secs(20);
/// How long a search runs before its projected total is trusted.
const PROJECTION_AFTER: Duration = Duration::from_millis(250);

/// When a search must stop. A search checks it between chunks of work:
/// past the budget it stops, and once it has run for a while it also stops
/// as soon as its rate says it would not finish within the budget, so a
/// hopeless search ends early instead of at the budget.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    started: Instant,
    budget: Duration,
}

impl Deadline {
    /// A deadline `budget` from now.
    #[must_use]
    pub fn after(budget: Duration) -> Self {
        Self {
            started: Instant::now(),
            budget,
        }
    }

    /// `Ok` while the search may go on, having done `done` of `total` units
    /// of work.
    ///
    /// # Errors
    ///
    /// [`SearchError::Deadline`] past the budget, or when the projected
    /// total time exceeds it.
    pub fn check(&self, done: usize, total: usize) -> Result<(), SearchError> {
        let elapsed = self.started.elapsed();
        let projected_over = elapsed >= PROJECTION_AFTER
            && done < total
            && elapsed.as_secs_f64() * (total as f64 / done.max(1) as f64)
                > self.budget.as_secs_f64();
        if elapsed > self.budget || projected_over {
            return Err(SearchError::Deadline {
                seconds: self.budget.as_secs(),
            });
        }
        Ok(())
    }

    /// Whether the budget is spent.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.started.elapsed() > self.budget
    }
}

impl Default for Deadline {
    fn default() -> Self {
        Self::after(SEARCH_TIME_BUDGET)
    }
}
