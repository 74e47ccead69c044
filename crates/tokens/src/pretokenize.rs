//! Cutting a text into pieces with the encoding's pre-tokenizer regex.
//!
//! Each thread compiles its own copy of the regex on first use (a few
//! milliseconds). Copies made by cloning one compiled regex share its
//! scratch pools, and threads contending for those pools ran slower
//! together than one thread alone; with a copy per thread, counting on two
//! cores is faster than on one.

use std::cell::OnceCell;
use std::rc::Rc;

use fancy_regex::Regex;

use crate::encoding::Encoding;
use crate::error::TokenError;

/// The `cl100k_base` pre-tokenizer pattern, as OpenAI defines the encoding.
const CL100K_PATTERN: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)",
    r"|[^\r\n\p{L}\p{N}]?+\p{L}++",
    r"|\p{N}{1,3}+",
    r"| ?[^\s\p{L}\p{N}]++[\r\n]*+",
    r"|\s++$",
    r"|\s*[\r\n]",
    r"|\s+(?!\S)",
    r"|\s",
);

/// The pre-tokenizer pattern of `encoding`.
fn pattern(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::O200kBase => tiktoken_rs::O200K_BASE_PAT_STR,
        Encoding::Cl100kBase => CL100K_PATTERN,
    }
}

thread_local! {
    /// This thread's compiled patterns, by [`slot`].
    static COMPILED: [OnceCell<Rc<Regex>>; 2] = const { [OnceCell::new(), OnceCell::new()] };
}

fn slot(encoding: Encoding) -> usize {
    match encoding {
        Encoding::O200kBase => 0,
        Encoding::Cl100kBase => 1,
    }
}

/// The pre-tokenizer of one encoding.
pub(crate) struct Pretokenizer {
    encoding: Encoding,
    /// Compiled when the encoding is loaded, so a bad pattern is a load
    /// error; used directly only where a thread's own copy is unavailable.
    template: Regex,
}

impl Pretokenizer {
    /// Compiles the pattern of `encoding`.
    pub(crate) fn new(encoding: Encoding) -> Result<Self, TokenError> {
        let template = Regex::new(pattern(encoding))
            .map_err(|err| TokenError::Load { encoding: encoding.name(), message: err.to_string() })?;
        Ok(Pretokenizer { encoding, template })
    }

    /// This thread's copy of the regex (`None` while the thread is exiting).
    fn local_regex(&self) -> Option<Rc<Regex>> {
        COMPILED
            .try_with(|cells| {
                let cell = &cells[slot(self.encoding)];
                Rc::clone(cell.get_or_init(|| {
                    Rc::new(Regex::new(pattern(self.encoding)).unwrap_or_else(|_| self.template.clone()))
                }))
            })
            .ok()
    }

    /// Calls `f` with each piece of `text`, in order; the pieces cover the
    /// text exactly.
    pub(crate) fn for_each_piece(&self, text: &str, mut f: impl FnMut(&str)) {
        match self.local_regex() {
            Some(regex) => pieces(&regex, text, &mut f),
            None => pieces(&self.template, text, &mut f),
        }
    }
}

/// Runs `regex` over `text`, resuming after any piece the engine gave up on.
/// Text between matches (which these patterns never leave) is passed on as
/// a piece of its own, so every byte is encoded.
fn pieces(regex: &Regex, text: &str, f: &mut impl FnMut(&str)) {
    let mut from = 0;
    while from < text.len() {
        let rest = &text[from..];
        let mut reached = 0;
        let mut gave_up = false;
        for found in regex.find_iter(rest) {
            let Ok(found) = found else {
                gave_up = true;
                break;
            };
            if found.start() > reached {
                f(&rest[reached..found.start()]);
            }
            f(found.as_str());
            reached = found.end();
        }
        if !gave_up {
            if reached < rest.len() {
                f(&rest[reached..]);
            }
            return;
        }
        let at = from + reached;
        let end = piece_after_give_up(text, at);
        f(&text[at..end]);
        from = end;
    }
}

/// The end of the piece at `at` when the regex engine gave up there.
///
/// The engine keeps one backtracking entry per character of `\s+(?!\S)`
/// and gives up past a million: on a run of at least two whitespace
/// characters without a line break. Both patterns then make the run's
/// piece with that alternative (every earlier one fails on such a run):
/// the whole run if it ends the text, else all of it but its last
/// character, which goes with what follows. For anything else (which the
/// engine is not known to give up on) the piece is one character, so the
/// text is still encoded in full.
fn piece_after_give_up(text: &str, at: usize) -> usize {
    let rest = &text[at..];
    let Some(first) = rest.chars().next() else { return text.len() };
    let run_len = rest.find(|c: char| !c.is_whitespace()).unwrap_or(rest.len());
    let run = &rest[..run_len];
    if run.chars().nth(1).is_none() || run.contains(['\r', '\n']) {
        return at + first.len_utf8();
    }
    if run_len == rest.len() {
        return text.len();
    }
    at + run.char_indices().next_back().map_or(run_len, |(last, _)| last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn give_up_rule_matches_the_regex_on_short_runs() {
        for encoding in Encoding::ALL {
            let regex = Regex::new(pattern(encoding)).expect("compiles");
            for text in [
                "  x",
                "   1",
                " \t !",
                "\u{3000}\u{a0} word",
                "\u{2028}\u{85}\u{2003}日",
                "     ",
                "\t\t",
                "  \u{301}",
            ] {
                let first = regex.find(text).expect("runs").expect("matches");
                assert_eq!(first.start(), 0, "{encoding}: {text:?}");
                assert_eq!(piece_after_give_up(text, 0), first.end(), "{encoding}: {text:?}");
            }
        }
    }

    #[test]
    fn pieces_cover_texts_the_engine_gives_up_on() {
        let pre = Pretokenizer::new(Encoding::O200kBase).expect("compiles");
        let text = format!("a{}b{}", " ".repeat(1_200_000), "\t".repeat(1_100_000));
        let mut pieces = Vec::new();
        pre.for_each_piece(&text, |piece| pieces.push(piece.len()));
        assert_eq!(pieces, vec![1, 1_199_999, 2, 1_100_000]);
    }

    #[test]
    fn threads_compile_their_own_copy() {
        let pre = Pretokenizer::new(Encoding::Cl100kBase).expect("compiles");
        let here = pre.local_regex().expect("available");
        let again = pre.local_regex().expect("available");
        assert!(Rc::ptr_eq(&here, &again));
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut n = 0;
                pre.for_each_piece("hello world, it's 2024", |_| n += 1);
                assert_eq!(n, 8);
            });
        });
    }
}
