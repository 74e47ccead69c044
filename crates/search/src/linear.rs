//! The linear-time engine, with bounded work on any input.
//!
//! A pattern without look-around or back-references runs on a lazy DFA
//! (`regex-automata`'s hybrid DFA, with the pattern's literal prefix as a
//! prefilter): each byte of the text costs a constant amount of work once
//! its state is built. Some patterns build a new state for nearly every byte
//! (`a[ab]{10000}[^ab]` over `a`/`b` text); the DFA then gives up instead of
//! spending minutes, and the search goes on with the NFA simulation of the
//! `regex` crate only when its worst-case work (per byte, as many threads as
//! NFA states, or as bytes of the line so far: no match crosses a line end) is
//! within [`FALLBACK_WORK_LIMIT`]. Otherwise the answer is
//! [`SearchError::TooExpensive`].
//!
//! Either way the text is searched in line-aligned chunks with the
//! [`Deadline`] checked in between, so no search outlives its time budget by
//! more than one chunk.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind};

use crate::deadline::Deadline;
use crate::error::SearchError;
use crate::lines::LineIndex;

/// Size limit for compiled programs (bytes).
pub const REGEX_SIZE_LIMIT: usize = 32 << 20;
/// Size limit for the lazy DFA's cache (bytes).
pub const DFA_SIZE_LIMIT: usize = 2 << 20;
/// Most NFA-state visits the fallback may need in the worst case: about a
/// second of work.
pub const FALLBACK_WORK_LIMIT: u64 = 1_000_000_000;
/// Bytes the DFA searches between two deadline checks (extended to the end
/// of the line it ends in).
const DFA_CHUNK: usize = 1 << 20;
/// NFA-state visits the fallback does between two deadline checks.
const FALLBACK_CHUNK_WORK: usize = 20_000_000;

/// A compiled linear-time pattern.
#[derive(Debug)]
pub struct LinearMatcher {
    dfa: DFA,
    fallback: regex::Regex,
    nfa_states: usize,
    /// Bytes of the shortest possible match: shorter lines cannot match.
    min_len: usize,
}

/// The lines a search covers and its deadline.
#[derive(Clone, Copy)]
struct Scope<'a, 'text> {
    lines: &'a LineIndex<'text>,
    last: usize,
    scope_start: usize,
    deadline: &'a Deadline,
}

impl LinearMatcher {
    /// Compiles `source` (the `regex` crate's syntax, multi-line mode).
    ///
    /// # Errors
    ///
    /// [`SearchError::PatternTooLarge`] past the size limits,
    /// [`SearchError::Compile`] for anything else.
    pub fn new(source: &str) -> Result<Self, SearchError> {
        Self::with_cache(source, DFA_SIZE_LIMIT)
    }

    /// [`LinearMatcher::new`] with a DFA cache of `cache_bytes`; with `0`
    /// the DFA gives up at once, so every search takes the fallback (for
    /// tests of the fallback).
    #[doc(hidden)]
    pub fn with_cache(source: &str, cache_bytes: usize) -> Result<Self, SearchError> {
        let fallback = regex::RegexBuilder::new(source)
            .multi_line(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(DFA_SIZE_LIMIT)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(limit) => {
                    SearchError::PatternTooLarge { limit_bytes: limit }
                }
                other => SearchError::Compile(one_line(&other.to_string())),
            })?;
        let hir = syntax::parse_with(source, &syntax::Config::new().multi_line(true))
            .map_err(|e| SearchError::Compile(one_line(&e.to_string())))?;
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                    .which_captures(thompson::WhichCaptures::None),
            )
            .build_from_hir(&hir)
            .map_err(|_| SearchError::PatternTooLarge {
                limit_bytes: REGEX_SIZE_LIMIT,
            })?;
        let nfa_states = nfa.states().len();
        let min_len = hir.properties().minimum_len().unwrap_or(0);
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::LeftmostFirst)
                    .prefilter(Prefilter::from_hir_prefix(MatchKind::LeftmostFirst, &hir))
                    .cache_capacity(cache_bytes)
                    .skip_cache_capacity_check(true)
                    .minimum_cache_clear_count(Some(3))
                    .minimum_bytes_per_state(Some(10)),
            )
            .build_from_nfa(nfa)
            .map_err(|e| SearchError::Compile(one_line(&e.to_string())))?;
        Ok(Self {
            dfa,
            fallback,
            nfa_states,
            min_len,
        })
    }

    /// Appends to `out`, in increasing order, the lines in `first..=last`
    /// that match (`last < lines.count()`).
    ///
    /// # Errors
    ///
    /// [`SearchError::TooExpensive`] when the DFA gives up and the fallback
    /// would exceed [`FALLBACK_WORK_LIMIT`]; [`SearchError::Deadline`] past
    /// the deadline.
    pub fn matching_lines(
        &self,
        lines: &LineIndex<'_>,
        first: usize,
        last: usize,
        deadline: &Deadline,
        out: &mut Vec<usize>,
    ) -> Result<(), SearchError> {
        let end = lines.end(last);
        let mut cache = self.dfa.create_cache();
        let scope_start = lines.start(first);
        // `line` is the line `pos` starts; a chunk ends at a line end, and
        // a search resumed within it keeps its end (matches never cross a
        // line end, so where the chunks end does not change what is found).
        let mut line = first;
        let mut chunk_end = 0;
        let mut checked = scope_start;
        loop {
            while line <= last && !self.may_hold_a_match(lines, line) {
                line += 1;
            }
            if line > last {
                return Ok(());
            }
            let pos = lines.start(line);
            if pos >= chunk_end {
                let chunk_last = lines.line_of_from(pos.saturating_add(DFA_CHUNK).min(end), line);
                chunk_end = lines.end(chunk_last);
            }
            let Ok(found) = self.dfa_search(&mut cache, lines.text(), pos, chunk_end) else {
                if self.fallback_work(lines, line, last) > FALLBACK_WORK_LIMIT {
                    return Err(SearchError::TooExpensive);
                }
                let scope = Scope {
                    lines,
                    last,
                    scope_start,
                    deadline,
                };
                return self.fallback_lines(&scope, line, out);
            };
            let next = match found {
                Some(match_end) => {
                    let found = lines.line_of_from(match_end, line);
                    out.push(found);
                    if found >= last {
                        return Ok(());
                    }
                    found + 1
                }
                None if chunk_end >= end => return Ok(()),
                None => lines.line_of_from(chunk_end + 1, line),
            };
            line = next;
            let pos = lines.start(line);
            // The clock is read once per chunk's worth of progress (and at
            // every chunk end), not at every match.
            if found.is_none() || pos - checked >= DFA_CHUNK / 16 {
                checked = pos;
                deadline.check(pos - scope_start, end - scope_start)?;
            }
        }
    }

    /// The NFA simulation from `line` on, in chunks of about
    /// [`FALLBACK_CHUNK_WORK`] state visits made of lines long enough to hold
    /// a match (shorter lines are skipped without a look).
    fn fallback_lines(
        &self,
        scope: &Scope<'_, '_>,
        mut line: usize,
        out: &mut Vec<usize>,
    ) -> Result<(), SearchError> {
        let Scope {
            lines,
            last,
            scope_start,
            deadline,
        } = *scope;
        let end = lines.end(last);
        let chunk_bytes = (FALLBACK_CHUNK_WORK / self.nfa_states.max(1)).max(1);
        loop {
            while line <= last && !self.may_hold_a_match(lines, line) {
                line += 1;
            }
            if line > last {
                return Ok(());
            }
            let pos = lines.start(line);
            let mut stop = line;
            while stop < last
                && self.may_hold_a_match(lines, stop + 1)
                && lines.end(stop + 1) - pos <= chunk_bytes
            {
                stop += 1;
            }
            match self
                .fallback
                .shortest_match_at(&lines.text()[..lines.end(stop)], pos)
            {
                Some(match_end) => {
                    let found = lines.line_of_from(match_end, line);
                    out.push(found);
                    line = found + 1;
                }
                None => line = stop + 1,
            }
            if line > last {
                return Ok(());
            }
            deadline.check(lines.start(line) - scope_start, end - scope_start)?;
        }
    }

    /// Whether line `i` is long enough for the shortest match.
    fn may_hold_a_match(&self, lines: &LineIndex<'_>, i: usize) -> bool {
        lines.end(i) - lines.start(i) >= self.min_len
    }

    /// The worst-case work of the NFA simulation over lines `first..=last`: per
    /// byte, at most one thread per NFA state, and, as no match crosses a line
    /// end (every thread dies at `'\n'`), at most one per byte of the line so far.
    fn fallback_work(&self, lines: &LineIndex<'_>, first: usize, last: usize) -> u64 {
        let states = self.nfa_states as u64;
        (first..=last)
            .filter(|&i| self.may_hold_a_match(lines, i))
            .map(|i| {
                let len = (lines.end(i) - lines.start(i)) as u64;
                len * states.min(len + 1)
            })
            .fold(0u64, u64::saturating_add)
    }

    /// The end of the earliest match ending in `pos..chunk_end`; `Err` when
    /// the DFA gave up.
    fn dfa_search(
        &self,
        cache: &mut Cache,
        text: &str,
        pos: usize,
        chunk_end: usize,
    ) -> Result<Option<usize>, ()> {
        let input = Input::new(text.as_bytes())
            .range(pos..chunk_end)
            .earliest(true);
        match self.dfa.try_search_fwd(cache, &input) {
            Ok(found) => Ok(found.map(|m| m.offset())),
            Err(_) => Err(()),
        }
    }
}

/// Collapses a multi-line engine message into one line.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
