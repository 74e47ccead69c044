//! Artifact lifecycle shared by every backend: expiry (TTL), sessions, size
//! budgets, deduplication, stats and cleanup.
//!
//! Every policy is off by default, so a store behaves as the SDK's until one
//! is set. Times are milliseconds since the Unix epoch and are always passed
//! in by the caller (`now_ms`), so a test, or a JavaScript clock, decides
//! what "now" is; nothing here reads the system clock except
//! [`system_now_ms`].

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest as _, Sha256};

/// Milliseconds since the Unix epoch (`Date.now()`).
#[must_use]
pub fn system_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// What a store does with the artifacts it holds. Each policy is off
/// (`None`/`false`) by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// Lifetime of an artifact stored without one of its own, in milliseconds.
    pub default_ttl_ms: Option<u64>,
    /// Most bytes of content the store keeps (after deduplication); the
    /// least recently used artifacts are evicted to stay under it.
    pub max_bytes: Option<u64>,
    /// Store identical content once (SHA-256 of the bytes).
    pub dedup: bool,
}

/// Lifecycle facts given with one artifact when it is stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tags<'a> {
    /// The session the artifact belongs to.
    pub session: Option<&'a str>,
    /// Its lifetime in milliseconds; `None` takes the store's default.
    pub ttl_ms: Option<u64>,
    /// The time of the store (milliseconds since the epoch); `None` reads
    /// the system clock.
    pub now_ms: Option<u64>,
}

impl Tags<'_> {
    /// The time of the store.
    #[must_use]
    pub fn now(&self) -> u64 {
        self.now_ms.unwrap_or_else(system_now_ms)
    }

    /// When the artifact expires under `policy` (`None`: never).
    #[must_use]
    pub fn expires_at(&self, policy: &Policy) -> Option<u64> {
        self.ttl_ms
            .or(policy.default_ttl_ms)
            .map(|ttl| self.now().saturating_add(ttl))
    }
}

/// Why a reference no longer names an artifact, when the store still
/// remembers it (see [`StorageError::Gone`](crate::StorageError::Gone)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoneReason {
    /// Its TTL ran out.
    Expired,
    /// Evicted (least recently used) to keep the store under its byte budget.
    Evicted,
}

impl GoneReason {
    /// The one-letter code used in file journals.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            GoneReason::Expired => "e",
            GoneReason::Evicted => "v",
        }
    }

    /// The reason for a journal code.
    #[must_use]
    pub fn from_code(code: &str) -> Option<Self> {
        match code {
            "e" => Some(GoneReason::Expired),
            "v" => Some(GoneReason::Evicted),
            _ => None,
        }
    }
}

impl fmt::Display for GoneReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GoneReason::Expired => "expired",
            GoneReason::Evicted => "evicted to stay under maxBytes",
        })
    }
}

/// Artifacts and bytes of one session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Live artifacts.
    pub artifacts: u64,
    /// Their content bytes (each artifact counted in full).
    pub bytes: u64,
}

/// What a store holds (expired artifacts not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Live artifacts.
    pub artifacts: u64,
    /// Their content bytes, each artifact counted in full.
    pub bytes: u64,
    /// Bytes actually held: identical content counted once when deduplicated.
    pub stored_bytes: u64,
    /// Per session id (artifacts stored without one are not listed).
    pub sessions: BTreeMap<String, SessionStats>,
}

impl Stats {
    /// Adds one artifact of `bytes` in `session`.
    pub fn add(&mut self, session: Option<&str>, bytes: u64) {
        self.artifacts += 1;
        self.bytes += bytes;
        if let Some(session) = session {
            let s = self.sessions.entry(session.to_owned()).or_default();
            s.artifacts += 1;
            s.bytes += bytes;
        }
    }
}

/// One artifact as a store lists it for an operator (expired ones
/// included: listing never removes anything).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactInfo {
    /// What [`Lifecycle::remove_artifacts`](crate::Lifecycle::remove_artifacts) takes: the reference of a memory
    /// store, the file name of a file store, the object name under the
    /// prefix of an S3 store.
    pub name: String,
    /// What a retrieve takes (the reference the store handed out).
    pub reference: String,
    /// The content type recorded at store time.
    pub content_type: String,
    /// Content bytes.
    pub bytes: u64,
    /// The session it was stored for.
    pub session: Option<String>,
    /// When it was stored (ms since the epoch); `None` when unknown.
    pub created_ms: Option<u64>,
    /// When it expires (ms since the epoch); `None`: never.
    pub expires_ms: Option<u64>,
}

impl ArtifactInfo {
    /// Whether its TTL ran out at `now_ms`.
    #[must_use]
    pub fn expired(&self, now_ms: u64) -> bool {
        self.expires_ms.is_some_and(|at| at <= now_ms)
    }
}

/// Puts a listing in the order operators read it: oldest first (unknown
/// creation times first), then by name.
pub fn sort_artifacts(artifacts: &mut [ArtifactInfo]) {
    artifacts.sort_unstable_by(|a, b| (a.created_ms.unwrap_or(0), &a.name).cmp(&(b.created_ms.unwrap_or(0), &b.name)));
}

/// SHA-256 of content, for deduplication.
pub type ContentDigest = [u8; 32];

/// The SHA-256 digest of `content`.
#[must_use]
pub fn digest(content: &[u8]) -> ContentDigest {
    Sha256::digest(content).into()
}

/// A digest as 64 lowercase hexadecimal digits.
#[must_use]
pub fn digest_hex(d: &ContentDigest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses 64 hexadecimal digits back into a digest.
#[must_use]
pub fn parse_digest_hex(hex: &str) -> Option<ContentDigest> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// How many removed references a store remembers the reason for.
pub const REMEMBERED_REMOVALS: usize = 65_536;

/// The reasons recent artifacts went away, so that a reference that expired
/// or was evicted says so; bounded (oldest forgotten first).
#[derive(Debug, Default)]
pub struct Removals {
    reasons: HashMap<String, GoneReason>,
    order: VecDeque<String>,
}

impl Removals {
    /// Remembers why `name` went away.
    pub fn remember(&mut self, name: &str, reason: GoneReason) {
        if self.reasons.insert(name.to_owned(), reason).is_none() {
            self.order.push_back(name.to_owned());
            while self.order.len() > REMEMBERED_REMOVALS {
                if let Some(old) = self.order.pop_front() {
                    self.reasons.remove(&old);
                }
            }
        }
    }

    /// Whether no reason is remembered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }

    /// Forgets `name` (it names an artifact again).
    pub fn forget(&mut self, name: &str) {
        // Most catalogs remember no removal: no name is hashed for nothing.
        if !self.reasons.is_empty() {
            self.reasons.remove(name);
        }
    }

    /// Why `name` went away, if remembered.
    #[must_use]
    pub fn reason(&self, name: &str) -> Option<GoneReason> {
        self.reasons.get(name).copied()
    }
}

impl Removals {
    /// Takes over what `other` remembers (its oldest first), on top of what
    /// this one does.
    pub fn absorb(&mut self, other: Removals) {
        let Removals { mut reasons, order } = other;
        for name in order {
            if let Some(reason) = reasons.remove(&name) {
                match self.reasons.get_mut(&name) {
                    Some(known) => *known = reason,
                    None => self.remember(&name, reason),
                }
            }
        }
    }
}

/// Position of an artifact in a [`UseOrder`]: the time it ranks by (ms),
/// then the order it was placed in (a tie-break).
type UseKey = (u64, u64);

/// Least-recently-used order of artifacts: each artifact ranks by a time
/// (its last use by this process, or when it was stored), ties broken by
/// the order of the calls; the oldest goes first.
#[derive(Debug, Default)]
pub struct UseOrder {
    next_tick: u64,
    by_key: BTreeMap<UseKey, String>,
    key_of: HashMap<String, UseKey>,
}

impl UseOrder {
    /// Records a use of `name` at `at_ms` (its first, or a later one).
    pub fn touch(&mut self, name: &str, at_ms: u64) {
        self.next_tick += 1;
        let key = (at_ms, self.next_tick);
        self.place(name, key);
    }

    /// Records `name`, stored at `created_ms` and not used by this process
    /// since, unless it is already ordered (then it keeps its place).
    pub fn insert_unused(&mut self, name: &str, created_ms: u64) {
        if self.key_of.contains_key(name) {
            return;
        }
        self.touch(name, created_ms);
    }

    fn place(&mut self, name: &str, key: UseKey) {
        if let Some(old) = self.key_of.insert(name.to_owned(), key) {
            self.by_key.remove(&old);
        }
        self.by_key.insert(key, name.to_owned());
    }

    /// Removes `name`.
    pub fn remove(&mut self, name: &str) {
        if let Some(key) = self.key_of.remove(name) {
            self.by_key.remove(&key);
        }
    }

    /// Keeps only the names `keep` selects.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        let dropped: Vec<String> = self.key_of.keys().filter(|n| !keep(n)).cloned().collect();
        for name in dropped {
            self.remove(&name);
        }
    }

    /// Whether `name` is ordered.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.key_of.contains_key(name)
    }

    /// The least recently used name, if any.
    #[must_use]
    pub fn oldest(&self) -> Option<&str> {
        self.by_key.values().next().map(String::as_str)
    }

    /// How many names are ordered.
    #[must_use]
    pub fn len(&self) -> usize {
        self.key_of.len()
    }

    /// Whether no name is ordered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.key_of.is_empty()
    }
}

/// Artifacts by the time they expire, so that what expired is found
/// without looking at every artifact.
#[derive(Debug, Default)]
pub struct Expiries {
    by_time: BTreeSet<(u64, String)>,
}

impl Expiries {
    /// Records that `name` expires at `at_ms` (nothing for `None`: never).
    pub fn insert(&mut self, name: &str, at_ms: Option<u64>) {
        if let Some(at) = at_ms {
            self.by_time.insert((at, name.to_owned()));
        }
    }

    /// Forgets that `name` expires at `at_ms`.
    pub fn remove(&mut self, name: &str, at_ms: Option<u64>) {
        if let Some(at) = at_ms {
            self.by_time.remove(&(at, name.to_owned()));
        }
    }

    /// The names expired at `now_ms` (expiring at or before it), soonest first.
    #[must_use]
    pub fn due(&self, now_ms: u64) -> Vec<String> {
        self.by_time.iter().take_while(|(at, _)| *at <= now_ms).map(|(_, name)| name.clone()).collect()
    }

    /// Whether anything is expired at `now_ms`.
    #[must_use]
    pub fn any_due(&self, now_ms: u64) -> bool {
        self.by_time.first().is_some_and(|(at, _)| *at <= now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_round_trip_through_hex() {
        let d = digest(b"hello");
        let hex = digest_hex(&d);
        assert_eq!(hex, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
        assert_eq!(parse_digest_hex(&hex), Some(d));
        assert_eq!(parse_digest_hex("zz"), None);
        assert_eq!(parse_digest_hex(&"g".repeat(64)), None);
    }

    #[test]
    fn removals_are_bounded_and_forgettable() {
        let mut r = Removals::default();
        for i in 0..REMEMBERED_REMOVALS + 10 {
            r.remember(&format!("n{i}"), GoneReason::Expired);
        }
        assert_eq!(r.reason("n0"), None);
        assert_eq!(r.reason(&format!("n{}", REMEMBERED_REMOVALS + 9)), Some(GoneReason::Expired));
        r.forget("n20");
        assert_eq!(r.reason("n20"), None);
    }

    #[test]
    fn use_order_ranks_by_time_then_by_call_and_follows_uses() {
        let mut o = UseOrder::default();
        o.touch("a", 1_000);
        o.touch("b", 1_000);
        // Stored by another process at 2_000: after every use before then.
        o.insert_unused("foreign", 2_000);
        o.insert_unused("older", 500);
        assert_eq!(o.oldest(), Some("older"));
        o.insert_unused("older", 5_000);
        assert_eq!(o.oldest(), Some("older"), "an ordered name keeps its place");
        o.remove("older");
        assert_eq!(o.oldest(), Some("a"));
        o.touch("a", 3_000);
        assert_eq!(o.oldest(), Some("b"));
        o.remove("b");
        assert_eq!(o.oldest(), Some("foreign"));
        o.retain(|n| n != "foreign");
        assert_eq!((o.oldest(), o.len(), o.contains("foreign")), (Some("a"), 1, false));
    }

    #[test]
    fn expiries_list_what_is_due_soonest_first() {
        let mut e = Expiries::default();
        e.insert("late", Some(30));
        e.insert("never", None);
        e.insert("soon", Some(10));
        e.insert("same", Some(10));
        assert!(!e.any_due(9));
        assert_eq!(e.due(10), ["same", "soon"]);
        e.remove("same", Some(10));
        assert_eq!(e.due(100), ["soon", "late"]);
    }

    #[test]
    fn removals_absorb_another_s_reasons() {
        let mut mine = Removals::default();
        mine.remember("a", GoneReason::Expired);
        let mut theirs = Removals::default();
        theirs.remember("a", GoneReason::Evicted);
        theirs.remember("b", GoneReason::Expired);
        mine.absorb(theirs);
        assert_eq!((mine.reason("a"), mine.reason("b")), (Some(GoneReason::Evicted), Some(GoneReason::Expired)));
    }

    #[test]
    fn expiry_takes_the_artifact_ttl_then_the_default() {
        let policy = Policy { default_ttl_ms: Some(1_000), ..Policy::default() };
        let own = Tags { ttl_ms: Some(10), now_ms: Some(5), ..Tags::default() };
        assert_eq!(own.expires_at(&policy), Some(15));
        let default = Tags { now_ms: Some(5), ..Tags::default() };
        assert_eq!(default.expires_at(&policy), Some(1_005));
        assert_eq!(default.expires_at(&Policy::default()), None);
    }
}
