//! The regular expression engine of `test`, `match`, `capture`, `scan`,
//! `split/2`, `splits`, `sub` and `gsub`, metered as it runs.
//!
//! Patterns are compiled with `regex-automata` (the syntax of Rust's `regex`
//! crate, a superset of what jaq accepts) into a Thompson NFA, a forward and a
//! reverse lazy DFA, and a Pike VM. A search is driven here, one byte at a
//! time, through the lazy DFAs' public transition API:
//!
//! 1. the forward DFA scans from the search's start to find where the
//!    leftmost-first match ends (it goes dead, or the text ends);
//! 2. the reverse DFA scans back from that end to find where the match starts;
//! 3. the Pike VM, anchored on exactly that span, reports the capture groups.
//!
//! The scans count their bytes as evaluation steps as they go, so a search
//! stops wherever the query's steps or time run out, however long the text
//! or however often a global match scans it again. The Pike VM's work is
//! bounded by the span times the automaton and charged before it runs. When a
//! lazy DFA gives up (its cache thrashes, or a Unicode word boundary meets a
//! non-ASCII byte), the Pike VM searches instead, its worst case charged
//! before it runs: a search that cannot be afforded is refused, never run.
//!
//! Patterns are limited to [`MAX_PATTERN_BYTES`] and their NFA to
//! [`MAX_NFA_BYTES`]; the memory of a compiled pattern and of its search
//! state is charged to the query.

use std::sync::Arc;

use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson::pikevm::{Cache as PikeCache, PikeVM};
use regex_automata::nfa::thompson::{WhichCaptures, NFA};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind, PatternID};

use crate::cost;
use crate::meter;

/// Longest pattern accepted, in bytes.
pub(crate) const MAX_PATTERN_BYTES: usize = 64 << 10;

/// Largest NFA a pattern may compile to, in bytes.
pub(crate) const MAX_NFA_BYTES: usize = 1 << 20;

/// Cache of each lazy DFA, in bytes.
const DFA_CACHE_BYTES: usize = 1 << 20;

/// Haystack bytes a DFA scans per evaluation step (a transition costs a few
/// nanoseconds, an evaluation step a few tens).
const DFA_BYTES_PER_STEP: u64 = 8;

/// Bytes scanned between two looks at the meter.
const SCAN_CHUNK: usize = 4096;

/// The flags of jq's regular expression filters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Flags {
    /// `g`: all matches, not only the first.
    pub(crate) global: bool,
    /// `n`: ignore empty matches.
    pub(crate) ignore_empty: bool,
    i: bool,
    m: bool,
    s: bool,
    l: bool,
    x: bool,
}

impl Flags {
    /// Reads jq's flag letters; the first unknown letter is the error.
    pub(crate) fn new(flags: &str) -> Result<Self, char> {
        let mut out = Self::default();
        for flag in flags.chars() {
            match flag {
                'g' => out.global = true,
                'n' => out.ignore_empty = true,
                'i' => out.i = true,
                'm' => out.m = true,
                's' => out.s = true,
                'l' => out.l = true,
                'x' => out.x = true,
                'p' => {
                    out.m = true;
                    out.s = true;
                }
                c => return Err(c),
            }
        }
        Ok(out)
    }

    /// The syntax the flags select.
    fn syntax(self) -> syntax::Config {
        syntax::Config::new()
            .case_insensitive(self.i)
            .multi_line(self.m)
            .dot_matches_new_line(self.s)
            .swap_greed(self.l)
            .ignore_whitespace(self.x)
            .utf8(true)
    }
}

/// Why a lazy DFA scan could not say (the Pike VM searches instead).
struct GaveUp;

/// A compiled pattern with its search state.
pub(crate) struct Regex {
    forward: DFA,
    reverse: DFA,
    pike: PikeVM,
    forward_cache: DfaCache,
    reverse_cache: DfaCache,
    pike_cache: PikeCache,
    /// Capture group names (`None` for unnamed groups), group 0 first.
    names: Vec<Option<Arc<str>>>,
    /// Evaluation steps the Pike VM may take per haystack byte.
    pike_steps_per_byte: u64,
}

impl Regex {
    /// Compiles `pattern`, counting steps for its length and charging the
    /// memory of the compiled pattern and its search state.
    pub(crate) fn new(pattern: &str, flags: Flags) -> Result<Self, String> {
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(format!("the pattern is {} bytes long, the limit is {MAX_PATTERN_BYTES}", pattern.len()));
        }
        meter::tick(1 + pattern.len() as u64 / 16);
        // the parse tree takes a few nodes per pattern byte
        meter::charge(cost::block(pattern.len().saturating_mul(64)));
        let too_large = |e: String| {
            if e.contains("size limit") || e.contains("exceeded limit") {
                format!("the pattern is too large (its automaton exceeds {MAX_NFA_BYTES} bytes)")
            } else {
                e
            }
        };
        // A syntax error is told by its kind ("unclosed group"), on one line.
        let explained = |e: regex_automata::nfa::thompson::BuildError| {
            let syntax = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<regex_syntax::Error>());
            match syntax {
                Some(regex_syntax::Error::Parse(e)) => e.kind().to_string(),
                Some(regex_syntax::Error::Translate(e)) => e.kind().to_string(),
                _ => too_large(e.to_string()),
            }
        };
        let compile = |reverse: bool| {
            let config = NFA::config()
                .nfa_size_limit(Some(MAX_NFA_BYTES))
                .utf8(true)
                .reverse(reverse)
                .which_captures(if reverse { WhichCaptures::None } else { WhichCaptures::All });
            NFA::compiler().syntax(flags.syntax()).configure(config).build(pattern).map_err(explained)
        };
        let nfa = compile(false)?;
        let reversed = compile(true)?;
        let dfa = |nfa: NFA, kind: MatchKind| {
            let config = DFA::config()
                .match_kind(kind)
                .cache_capacity(DFA_CACHE_BYTES)
                .skip_cache_capacity_check(true)
                .unicode_word_boundary(true)
                .minimum_cache_clear_count(Some(3));
            DFA::builder().configure(config).build_from_nfa(nfa).map_err(|e| too_large(e.to_string()))
        };
        let nfa_bytes = nfa.memory_usage() + reversed.memory_usage();
        let states = nfa.states().len() as u64;
        let forward = dfa(nfa.clone(), MatchKind::LeftmostFirst)?;
        let reverse = dfa(reversed, MatchKind::All)?;
        let names = nfa.group_info().pattern_names(PatternID::ZERO).map(|n| n.map(Arc::from)).collect();
        let pike = PikeVM::new_from_nfa(nfa).map_err(|e| e.to_string())?;
        let (forward_cache, reverse_cache, pike_cache) = (forward.create_cache(), reverse.create_cache(), pike.create_cache());
        meter::charge(nfa_bytes + 2 * DFA_CACHE_BYTES + pike_cache.memory_usage());
        // Each byte, the Pike VM follows every active state and copies its
        // capture slots.
        Ok(Self { forward, reverse, pike, forward_cache, reverse_cache, pike_cache, names, pike_steps_per_byte: 1 + states / 4 })
    }

    /// Name of capture group `i`, if it has one.
    pub(crate) fn name(&self, i: usize) -> Option<&Arc<str>> {
        self.names.get(i).and_then(Option::as_ref)
    }

    /// Searches `haystack` from byte `at` for the leftmost-first match;
    /// returns its capture spans (start and end byte of each group, `None` for
    /// groups that did not participate), or `None` if there is no match.
    pub(crate) fn search(&mut self, haystack: &[u8], at: usize) -> Option<Vec<Option<(usize, usize)>>> {
        if at > haystack.len() {
            return None;
        }
        let span = match self.match_end(haystack, at) {
            Ok(None) => return None,
            Ok(Some(end)) => match self.match_start(haystack, at, end) {
                Ok(start) => Some((start, end)),
                Err(GaveUp) => None,
            },
            Err(GaveUp) => None,
        };
        match span {
            Some((start, end)) => self.captures(haystack, start, end, Anchored::Yes),
            None => self.captures(haystack, at, haystack.len(), Anchored::No),
        }
    }

    /// Where the leftmost-first match at or after `at` ends, by the forward
    /// DFA; the scan counts its bytes as it goes.
    fn match_end(&mut self, haystack: &[u8], at: usize) -> Result<Option<usize>, GaveUp> {
        let (dfa, cache) = (&self.forward, &mut self.forward_cache);
        let input = Input::new(haystack).span(at..haystack.len());
        let mut sid = dfa.start_state_forward(cache, &input).map_err(|_| GaveUp)?;
        let mut end = None;
        if sid.is_match() {
            end = Some(at);
        }
        let mut scanned = 0;
        for (i, &byte) in haystack[at..].iter().enumerate() {
            scanned += 1;
            if scanned == SCAN_CHUNK {
                meter::tick(SCAN_CHUNK as u64 / DFA_BYTES_PER_STEP);
                scanned = 0;
            }
            sid = dfa.next_state(cache, sid, byte).map_err(|_| GaveUp)?;
            if sid.is_tagged() {
                if sid.is_match() {
                    // Matches are seen one byte late: this one ended before `byte`.
                    end = Some(at + i);
                } else if sid.is_dead() {
                    meter::tick(1 + scanned as u64 / DFA_BYTES_PER_STEP);
                    return Ok(end);
                } else if sid.is_quit() || sid.is_unknown() {
                    return Err(GaveUp);
                }
            }
        }
        meter::tick(1 + scanned as u64 / DFA_BYTES_PER_STEP);
        sid = dfa.next_eoi_state(cache, sid).map_err(|_| GaveUp)?;
        if sid.is_match() {
            end = Some(haystack.len());
        } else if sid.is_quit() {
            return Err(GaveUp);
        }
        Ok(end)
    }

    /// Where the match that ends at `end` starts (at `at` at the earliest),
    /// by the reverse DFA anchored at `end`.
    fn match_start(&mut self, haystack: &[u8], at: usize, end: usize) -> Result<usize, GaveUp> {
        let (dfa, cache) = (&self.reverse, &mut self.reverse_cache);
        let input = Input::new(haystack).span(at..end).anchored(Anchored::Yes);
        let mut sid: LazyStateID = dfa.start_state_reverse(cache, &input).map_err(|_| GaveUp)?;
        let mut start = if sid.is_match() { Some(end) } else { None };
        let mut scanned = 0;
        for i in (at..end).rev() {
            scanned += 1;
            if scanned == SCAN_CHUNK {
                meter::tick(SCAN_CHUNK as u64 / DFA_BYTES_PER_STEP);
                scanned = 0;
            }
            sid = dfa.next_state(cache, sid, haystack[i]).map_err(|_| GaveUp)?;
            if sid.is_tagged() {
                if sid.is_match() {
                    // Seen one byte late, as forward: the match starts after `i`.
                    start = Some(i + 1);
                } else if sid.is_dead() {
                    break;
                } else if sid.is_quit() || sid.is_unknown() {
                    return Err(GaveUp);
                }
            }
        }
        meter::tick(1 + scanned as u64 / DFA_BYTES_PER_STEP);
        if !sid.is_dead() {
            // The byte before the span (or the start of the text) settles
            // the assertions that look behind the match.
            sid = match at.checked_sub(1) {
                Some(before) => dfa.next_state(cache, sid, haystack[before]),
                None => dfa.next_eoi_state(cache, sid),
            }
            .map_err(|_| GaveUp)?;
            if sid.is_match() {
                start = Some(at);
            } else if sid.is_quit() {
                return Err(GaveUp);
            }
        }
        start.ok_or(GaveUp)
    }

    /// The capture spans of the leftmost-first match of the Pike VM in
    /// `start..end` (anchored at `start` or not); its worst case, the span
    /// times the automaton, is charged before it runs.
    fn captures(&mut self, haystack: &[u8], start: usize, end: usize, anchored: Anchored) -> Option<Vec<Option<(usize, usize)>>> {
        let work = ((end - start) as u64 + 1).saturating_mul(self.pike_steps_per_byte);
        meter::tick(work);
        let input = Input::new(haystack).span(start..end).anchored(anchored);
        let mut slots = vec![None; self.pike.get_nfa().group_info().slot_len()];
        self.pike.search_slots(&mut self.pike_cache, &input, &mut slots)?;
        let spans = slots
            .chunks(2)
            .map(|pair| match pair {
                [Some(s), Some(e)] => Some((s.get(), e.get())),
                _ => None,
            })
            .collect();
        Some(spans)
    }
}

/// Bytes of the UTF-8 sequence (or invalid byte) at the start of `s`; at least 1.
pub(crate) fn char_len(s: &[u8]) -> usize {
    match s.first() {
        None => 1,
        Some(&b) if b < 0x80 => 1,
        Some(_) => {
            let take = s.len().min(4);
            (1..=take)
                .rev()
                .find(|&n| std::str::from_utf8(&s[..n]).is_ok())
                .unwrap_or(1)
        }
    }
}
