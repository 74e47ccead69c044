//! Finding the lines that match a prepared pattern, with bounded work.
//!
//! * Literal fallbacks use `memchr::memmem` over the whole scope.
//! * Linear-engine patterns run over the scope in multi-line mode (they
//!   cannot match `'\n'`, so matches never span lines) on a lazy DFA with
//!   bounded work (see [`crate::linear`]); after each match the search
//!   resumes at the next line.
//! * Backtracking patterns (look-around, back-references) run per line with
//!   a backtracking step limit.
//!
//! Every search but the literal one (linear in the text) checks its
//! [`Deadline`] as it goes.

use memchr::memmem;

use crate::deadline::Deadline;
use crate::error::SearchError;
use crate::js_regex::Plan;
use crate::linear::{one_line, LinearMatcher};
use crate::lines::LineIndex;

pub use crate::linear::{DFA_SIZE_LIMIT, REGEX_SIZE_LIMIT};

/// Backtracking steps allowed per line for look-around/back-reference
/// patterns.
pub const BACKTRACK_LIMIT: usize = 1_000_000;

/// A compiled line matcher.
#[derive(Debug)]
pub enum Matcher {
    /// Matches no line (for example a literal containing `'\n'`).
    Never,
    /// Substring search.
    Literal(memmem::Finder<'static>),
    /// Linear-time regular expression.
    Linear(Box<LinearMatcher>),
    /// Backtracking regular expression, with an optional linear-time
    /// prefilter matching a superset of its lines.
    Backtracking {
        /// The exact matcher.
        exact: fancy_regex::Regex,
        /// Candidate-line finder.
        prefilter: Option<regex::Regex>,
    },
}

impl Matcher {
    /// Compiles `plan`.
    pub fn new(plan: &Plan) -> Result<Self, SearchError> {
        match plan {
            Plan::Literal(lit) if lit.contains('\n') || lit.is_empty() => Ok(Matcher::Never),
            Plan::Literal(lit) => Ok(Matcher::Literal(
                memmem::Finder::new(lit.as_bytes()).into_owned(),
            )),
            Plan::Regex {
                source,
                backtracking: false,
                ..
            } => LinearMatcher::new(source).map(|m| Matcher::Linear(Box::new(m))),
            Plan::Regex {
                source,
                backtracking: true,
                prefilter,
            } => {
                let exact = fancy_regex::RegexBuilder::new(source)
                    .backtrack_limit(BACKTRACK_LIMIT)
                    .delegate_size_limit(REGEX_SIZE_LIMIT)
                    .delegate_dfa_size_limit(DFA_SIZE_LIMIT)
                    .build()
                    .map_err(map_fancy_error)?;
                // The prefilter is an optimisation only: if it cannot be
                // built, every line is a candidate.
                let prefilter = prefilter.as_deref().and_then(|p| build_linear(p).ok());
                Ok(Matcher::Backtracking { exact, prefilter })
            }
        }
    }

    /// Appends to `out`, in increasing order, the indices of the lines in
    /// `first..=last` that match.
    ///
    /// # Errors
    ///
    /// What a pattern that cannot be run safely on this content reports
    /// ([`SearchError::TooExpensive`], [`SearchError::Deadline`],
    /// [`SearchError::TooMuchBacktracking`], ...).
    pub fn matching_lines(
        &self,
        lines: &LineIndex<'_>,
        first: usize,
        last: usize,
        deadline: &Deadline,
        out: &mut Vec<usize>,
    ) -> Result<(), SearchError> {
        if first > last || last >= lines.count() {
            return Ok(());
        }
        let text = lines.text();
        let hay_end = lines.end(last);
        match self {
            Matcher::Never => Ok(()),
            Matcher::Literal(finder) => {
                let hay = &text.as_bytes()[..hay_end];
                let (mut pos, mut from) = (lines.start(first), first);
                while pos <= hay.len() {
                    let Some(off) = finder.find(&hay[pos..]) else {
                        break;
                    };
                    let line = lines.line_of_from(pos + off, from);
                    out.push(line);
                    if line >= last {
                        break;
                    }
                    from = line + 1;
                    pos = lines.start(from);
                }
                Ok(())
            }
            Matcher::Linear(linear) => linear.matching_lines(lines, first, last, deadline, out),
            Matcher::Backtracking { exact, prefilter } => {
                // (line, offset in the line where a match may start)
                let candidates: Vec<(usize, usize)> = match prefilter {
                    Some(pre) => candidate_starts(pre, lines, first, last),
                    None => (first..=last).map(|i| (i, 0)).collect(),
                };
                for (n, &(i, from)) in candidates.iter().enumerate() {
                    match exact.find_from_pos(lines.line(i), from) {
                        Ok(Some(_)) => out.push(i),
                        Ok(None) => {}
                        Err(fancy_regex::Error::RuntimeError(_)) => {
                            return Err(SearchError::TooMuchBacktracking {
                                limit: BACKTRACK_LIMIT,
                                line: i as u64 + 1,
                            })
                        }
                        Err(other) => {
                            return Err(SearchError::Compile(one_line(&other.to_string())))
                        }
                    }
                    if n % 64 == 63 && deadline.check(n + 1, candidates.len()).is_err() {
                        return Err(SearchError::TimeBudgetExceeded {
                            seconds: crate::deadline::SEARCH_TIME_BUDGET.as_secs(),
                        });
                    }
                }
                Ok(())
            }
        }
    }
}

/// Lines in `first..=last` where the linear regex `re` matches, with in each line the leftmost
/// match starts. A pattern whose relaxation is `re` cannot match that line
/// any earlier, so the exact search may begin there.
fn candidate_starts(
    re: &regex::Regex,
    lines: &LineIndex<'_>,
    first: usize,
    last: usize,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let hay = &lines.text()[..lines.end(last)];
    let (mut pos, mut from) = (lines.start(first), first);
    while pos <= hay.len() {
        let Some(m) = re.find_at(hay, pos) else {
            break;
        };
        let line = lines.line_of_from(m.start(), from);
        out.push((line, m.start() - lines.start(line)));
        if line >= last {
            break;
        }
        from = line + 1;
        pos = lines.start(from);
    }
    out
}

fn build_linear(source: &str) -> Result<regex::Regex, SearchError> {
    regex::RegexBuilder::new(source)
        .multi_line(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => {
                SearchError::PatternTooLarge { limit_bytes: limit }
            }
            other => SearchError::Compile(one_line(&other.to_string())),
        })
}

fn map_fancy_error(e: fancy_regex::Error) -> SearchError {
    use fancy_regex::{CompileError, Error};
    match e {
        Error::CompileError(CompileError::LookBehindNotConst) => SearchError::UnsupportedLookbehind,
        Error::CompileError(CompileError::InnerError(inner)) => match inner.size_limit() {
            Some(limit) => SearchError::PatternTooLarge { limit_bytes: limit },
            None => SearchError::Compile(one_line(&inner.to_string())),
        },
        other => SearchError::Compile(one_line(&other.to_string())),
    }
}
