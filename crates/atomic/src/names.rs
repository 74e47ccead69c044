//! Naming of temporary files: unique per write, recognisable by a sweep.

use std::sync::atomic::{AtomicU64, Ordering};

/// Process-wide sequence shared by every scheme, so two writes of one process
/// never pick the same name.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// How the temporary files of one kind of write are named.
///
/// A temporary name is `<lead>[<target name>]<separator><pid>-<seq><tail>`:
/// the process id and a process-wide sequence number make it unique, and the
/// fixed parts let listings skip it and [`sweep_stale`](crate::sweep_stale)
/// recognise it. Whether the target's name is part of it is the scheme's
/// choice ([`plain`](Self::plain) or [`around_target`](Self::around_target)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TempNames {
    lead: &'static str,
    with_target: bool,
    separator: &'static str,
    tail: &'static str,
}

impl TempNames {
    /// Names `<lead><pid>-<seq>`, whatever the target.
    #[must_use]
    pub const fn plain(lead: &'static str) -> Self {
        Self {
            lead,
            with_target: false,
            separator: "",
            tail: "",
        }
    }

    /// Names `<lead><target name><separator><pid>-<seq><tail>`.
    ///
    /// `separator` must not be empty (it delimits the target's name).
    #[must_use]
    pub const fn around_target(
        lead: &'static str,
        separator: &'static str,
        tail: &'static str,
    ) -> Self {
        assert!(
            !separator.is_empty(),
            "a separator delimits the target's name"
        );
        Self {
            lead,
            with_target: true,
            separator,
            tail,
        }
    }

    /// A fresh name for a temporary file of `target_name` (ignored by plain schemes).
    #[must_use]
    pub fn fresh(&self, target_name: &str) -> String {
        let seq = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let target = if self.with_target { target_name } else { "" };
        let pid = std::process::id();
        format!(
            "{}{target}{}{pid}-{seq}{}",
            self.lead, self.separator, self.tail
        )
    }

    /// Whether `name` is a temporary name of this scheme.
    #[must_use]
    pub fn matches(&self, name: &str) -> bool {
        let Some(rest) = name
            .strip_prefix(self.lead)
            .and_then(|rest| rest.strip_suffix(self.tail))
        else {
            return false;
        };
        let unique = if self.with_target {
            match rest.rfind(self.separator) {
                Some(at) if at > 0 => &rest[at + self.separator.len()..],
                _ => return false,
            }
        } else {
            rest
        };
        is_unique_part(unique)
    }
}

/// `<digits>-<digits>`.
fn is_unique_part(s: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    s.split_once('-')
        .is_some_and(|(pid, seq)| digits(pid) && digits(seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: TempNames = TempNames::plain(".tmp-");
    const HIDDEN: TempNames = TempNames::around_target(".", ".", ".tmp");
    const MARKED: TempNames = TempNames::around_target("", ".__strands_tmp_", "");

    #[test]
    fn fresh_names_are_unique_and_recognised() {
        for scheme in [PLAIN, HIDDEN, MARKED] {
            let a = scheme.fresh("snapshot_latest.json");
            let b = scheme.fresh("snapshot_latest.json");
            assert_ne!(a, b);
            for name in [a, b] {
                assert!(scheme.matches(&name), "{name}");
            }
        }
        let hidden = HIDDEN.fresh("a.json");
        assert!(
            hidden.starts_with(".a.json.") && hidden.ends_with(".tmp"),
            "{hidden}"
        );
        let marked = MARKED.fresh("k");
        assert!(marked.starts_with("k.__strands_tmp_"), "{marked}");
        let plain = PLAIN.fresh("ignored");
        assert!(
            plain.starts_with(".tmp-") && !plain.contains("ignored"),
            "{plain}"
        );
    }

    #[test]
    fn other_names_are_not_recognised() {
        for name in [
            "snapshot_latest.json.tmp",
            ".snapshot_latest.json.tmp",
            ".x.1-.tmp",
            "..1-2.tmp",
            ".x.a-2.tmp",
        ] {
            assert!(!HIDDEN.matches(name), "{name}");
        }
        for name in [
            ".tmp-",
            ".tmp-1",
            ".tmp-1-x",
            ".tmp-x-1",
            "tmp-1-2",
            ".tmp-1-2-3",
        ] {
            assert!(!PLAIN.matches(name), "{name}");
        }
        for name in ["k.__strands_tmp_0b9c2f1e-uuid", "k", ".__strands_tmp_1-2"] {
            assert!(!MARKED.matches(name), "{name}");
        }
        assert!(HIDDEN.matches(".a.b.json.12-0.tmp"));
        assert!(PLAIN.matches(".tmp-12-0"));
    }
}
