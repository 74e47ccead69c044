//! Reading ahead while a query walks the elements of an array.
//!
//! A kept document is far larger than the processor's caches, and a record is
//! a chain of separate allocations: the object, its entries, each key's string,
//! the key's bytes in the document's text. A filter such as
//! `.users[] | select(.active)` waits for memory at every link of that chain,
//! one record after the other, and the walk costs mostly memory latency. Here
//! the links of the records a few places ahead are requested before they are
//! needed (the object of the twelfth record ahead, the entries of the eighth,
//! the key strings of the fourth), so the loads of several records overlap.
//! A key's bytes are not requested: the keys of one layout share theirs (see
//! `shared_keys`). It changes no value, counts no step and charges no memory; on
//! processors without a prefetch instruction it does nothing. The direct
//! evaluator calls it only for a `.[]` whose elements are read by field.

use bytes::Bytes;
use jaq_json::{Map, Rc, Val};

/// How far ahead of the element being read each link is requested.
const OBJECT_AHEAD: usize = 12;
const ENTRIES_AHEAD: usize = 8;
const KEYS_AHEAD: usize = 4;
/// Entries requested per object (records have a handful of fields).
const ENTRIES_READ_AHEAD: usize = 16;
/// One entry of an object (hash, key, value), about as indexmap lays it out (its
/// field order is not fixed: the span requested may be off by a field, which only
/// makes the request less useful).
const ENTRY_HASH_BYTES: usize = core::mem::size_of::<u64>();
const ENTRY_BYTES: usize = ENTRY_HASH_BYTES + 2 * core::mem::size_of::<Val>();
const CACHE_LINE: usize = 64;
/// The reference counts in front of a shared value.
const COUNTS_BYTES: usize = 2 * core::mem::size_of::<usize>();

/// Requests what reading `items[at]`'s successors will need (see the module).
pub(crate) fn read_ahead(items: &[Val], at: usize) {
    match items.get(at.saturating_add(OBJECT_AHEAD)) {
        // the map's fields and, before them, the reference counts (two lines)
        Some(Val::Obj(o)) => request_shared(Rc::as_ptr(o).cast(), core::mem::size_of::<Map>()),
        Some(Val::Arr(a)) => request_shared(Rc::as_ptr(a).cast(), core::mem::size_of::<Vec<Val>>()),
        _ => {}
    }
    if let Some(Val::Obj(o)) = items.get(at.saturating_add(ENTRIES_AHEAD)) {
        if let Some((first, _)) = o.get_index(0) {
            // the first key, and before it its entry's hash
            let first: *const u8 = (first as *const Val).cast();
            request_span(
                first.wrapping_sub(ENTRY_HASH_BYTES),
                o.as_slice().len().min(ENTRIES_READ_AHEAD) * ENTRY_BYTES,
            );
        }
    }
    if let Some(Val::Obj(o)) = items.get(at.saturating_add(KEYS_AHEAD)) {
        for key in o.keys().take(ENTRIES_READ_AHEAD) {
            if let Val::TStr(b) | Val::BStr(b) = key {
                request((&**b as *const Bytes).cast());
            }
        }
    }
}

/// [`request_span`] for a shared value at `p` of `len` bytes and the two
/// reference counts in front of it.
fn request_shared(p: *const u8, len: usize) {
    request_span(p.wrapping_sub(COUNTS_BYTES), len + COUNTS_BYTES);
}

/// [`request`] for every line of the `len` bytes at `p`.
fn request_span(p: *const u8, len: usize) {
    if len == 0 {
        return;
    }
    for offset in (0..len).step_by(CACHE_LINE) {
        request(p.wrapping_add(offset));
    }
    request(p.wrapping_add(len - 1));
}

/// Asks the processor to bring the cache line holding `p` closer. Never reads
/// through `p` (a prefetch cannot fault).
#[inline(always)]
fn request(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint; it neither reads nor faults, whatever `p` is.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast())
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::read_ahead;
    use jaq_json::{Map, Rc, Val};

    /// Reading ahead takes any array and any position, past the end included.
    #[test]
    fn any_array_at_any_position() {
        let wide: Map = (0..40)
            .map(|i| (Val::utf8_str(format!("k{i}").into_bytes()), Val::Null))
            .collect();
        let kinds = [
            Val::Null,
            Val::utf8_str(b"s".to_vec()),
            Val::Arr(Rc::new(vec![])),
            Val::Obj(Rc::new(Map::default())),
            Val::Obj(Rc::new(wide)),
        ];
        for len in 0..24 {
            let items: Vec<Val> = (0..len).map(|i| kinds[i % kinds.len()].clone()).collect();
            for at in (0..len + 10).chain([usize::MAX - 1, usize::MAX]) {
                read_ahead(&items, at);
            }
        }
    }
}
