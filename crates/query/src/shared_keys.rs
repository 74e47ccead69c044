//! The object keys a document's reader has read, so that equal keys share their
//! bytes.
//!
//! Records of one array repeat the same keys. When each key of each record has
//! the bytes of its first occurrence (the same place in the document's text), a
//! query looking for a field recognises the key it found in the previous record
//! by its address, without reading its text (see `valt::index_ref`). Only keys
//! without escapes, at most [`LONGEST_SHARED_KEY`] bytes long, are kept; a table
//! that is full gives a key its own bytes.

use bytes::Bytes;

/// Keys longer than this many bytes are not kept.
pub(crate) const LONGEST_SHARED_KEY: usize = 64;
/// Places in the table.
const SLOTS: usize = 256;
/// Places tried for one key, from the one its hash gives.
const PROBES: usize = 4;

/// Keys read before, by a hash of their text (allocated at the first key).
#[derive(Default)]
pub(crate) struct KeyTable {
    slots: Option<Box<[Bytes; SLOTS]>>,
}

impl KeyTable {
    /// The bytes of a key equal to `text` read before, else `make()`'s (kept
    /// for the next equal keys when there is room).
    pub(crate) fn share(&mut self, text: &[u8], make: impl FnOnce() -> Bytes) -> Bytes {
        if text.is_empty() {
            return Bytes::new();
        }
        let slots = self
            .slots
            .get_or_insert_with(|| Box::new(core::array::from_fn(|_| Bytes::new())));
        let start = slot_of(text);
        for probe in 0..PROBES {
            let slot = &mut slots[(start + probe) % SLOTS];
            if slot.is_empty() {
                let key = make();
                *slot = key.clone();
                return key;
            }
            if slot[..] == *text {
                return slot.clone();
            }
        }
        make()
    }
}

/// Where the table looks for `text` first: a multiplicative hash of all its
/// bytes, eight at a time, and its length.
fn slot_of(text: &[u8]) -> usize {
    let mut hash = text.len() as u64;
    for chunk in text.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        hash = (hash ^ u64::from_le_bytes(word)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        hash ^= hash >> 29;
    }
    (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % SLOTS
}

#[cfg(test)]
mod tests {
    use super::KeyTable;
    use bytes::Bytes;

    /// Field names of common records, pairs of the same length and ends among them.
    const KEYS: [&str; 40] = [
        "id",
        "name",
        "email",
        "role",
        "active",
        "logins",
        "tags",
        "min_x",
        "max_x",
        "min_y",
        "max_y",
        "lng",
        "lat",
        "alt",
        "user",
        "labels",
        "url",
        "html_url",
        "title",
        "body",
        "state",
        "created_at",
        "updated_at",
        "closed_at",
        "number",
        "comments",
        "author",
        "assignee",
        "milestone",
        "locked",
        "type",
        "value",
        "key",
        "level",
        "message",
        "status",
        "path",
        "method",
        "duration_ms",
        "timestamp",
    ];

    #[test]
    fn every_key_of_a_record_layout_is_shared() {
        let mut table = KeyTable::default();
        let text: Bytes = KEYS.concat().into();
        let firsts: Vec<Bytes> = KEYS
            .iter()
            .scan(0, |at, k| {
                let range = *at..*at + k.len();
                *at += k.len();
                Some(table.share(k.as_bytes(), || text.slice(range)))
            })
            .collect();
        for (key, first) in KEYS.iter().zip(&firsts) {
            assert_eq!(&first[..], key.as_bytes());
            let again = table.share(key.as_bytes(), || Bytes::copy_from_slice(key.as_bytes()));
            assert_eq!(again.as_ptr(), first.as_ptr(), "{key}");
            assert_eq!(&again[..], key.as_bytes());
        }
    }

    #[test]
    fn a_full_table_gives_keys_their_own_bytes() {
        let mut table = KeyTable::default();
        for i in 0..2000 {
            let key = format!("k{i}");
            let shared = table.share(key.as_bytes(), || Bytes::copy_from_slice(key.as_bytes()));
            assert_eq!(&shared[..], key.as_bytes());
        }
        for i in 0..2000 {
            let key = format!("k{i}");
            assert_eq!(
                &table.share(key.as_bytes(), || Bytes::copy_from_slice(key.as_bytes()))[..],
                key.as_bytes()
            );
        }
        assert!(table.share(b"", || unreachable!()).is_empty());
    }
}
