//! What values really cost in memory: the sizes charged to the memory budget.
//!
//! The figures follow the allocations jaq-json's value type makes on a 64-bit
//! target, each heap block counted as glibc's allocator lays it out (8 bytes
//! of header, rounded up to 16, at least 32 bytes); other allocators such as
//! mimalloc use at most that much for blocks of these sizes.
//!
//! | value                      | heap blocks it owns                                      |
//! |----------------------------|----------------------------------------------------------|
//! | `null`, boolean, integer, float | none (held in its 16-byte slot)                     |
//! | string                     | a boxed `Bytes` handle ([`STRING`]) and, unless it shares another buffer, its bytes |
//! | array of capacity `n`      | the reference-counted vector ([`ARRAY`]) and `n` slots of 16 bytes |
//! | object of capacity `n`     | the reference-counted map ([`OBJECT`]), `n` entries of 40 bytes and the hash index |
//!
//! A copy of a string (`Val::clone`) allocates a new handle; a copy of an
//! array or object only increments a reference count. Charging a string's
//! handle where a value is *stored* in an array or object (see [`held`])
//! therefore counts every copy that stays alive, while values that only pass
//! through the interpreter are not charged again.

use core::mem::size_of;
use jaq_json::{Map, Num, Val};

/// Bytes a heap block of `size` bytes occupies (glibc: 8 bytes of header,
/// rounded up to 16 bytes, at least 32); 0 for no block.
pub(crate) const fn block(size: usize) -> usize {
    if size == 0 {
        return 0;
    }
    let rounded = size.saturating_add(8 + 15) & !15;
    if rounded < 32 {
        32
    } else {
        rounded
    }
}

/// Bytes of a reference count pair (strong and weak) in front of shared data.
const RC_COUNTS: usize = 2 * size_of::<usize>();

/// One array slot: the size of a value.
pub(crate) const SLOT: usize = size_of::<Val>();

/// The boxed `Bytes` handle every string value owns.
pub(crate) const STRING: usize = block(size_of::<bytes::Bytes>());

/// The reference-counted vector of an array (without its slots).
pub(crate) const ARRAY: usize = block(RC_COUNTS + size_of::<Vec<Val>>());

/// The reference-counted map of an object (without its entries).
pub(crate) const OBJECT: usize = block(RC_COUNTS + size_of::<Map>());

/// One entry of an object's entry vector: the key's hash, the key and the value.
const ENTRY: usize = size_of::<usize>() + 2 * SLOT;

/// The header `Bytes::from_owner` allocates around a buffer it takes over
/// (a reference count, a drop function and the owner, a `String` or `Vec`).
pub(crate) const OWNER: usize = block(2 * size_of::<usize>() + size_of::<String>());

/// The size of a value while the interpreter passes it around (a value and its depth bound).
pub(crate) const VALUE: usize = size_of::<crate::value::Value>();

/// A string value with `len` bytes of its own.
pub(crate) const fn string(len: usize) -> usize {
    STRING + block(len)
}

/// The slots of an array of capacity `cap`.
pub(crate) const fn slots(cap: usize) -> usize {
    block(cap.saturating_mul(SLOT))
}

/// An array of capacity `cap` (vector and slots, not what the slots own).
pub(crate) const fn array(cap: usize) -> usize {
    ARRAY + slots(cap)
}

/// Buckets of the hash index that holds `cap` entries (hashbrown's sizing).
const fn buckets(cap: usize) -> usize {
    if cap == 0 {
        0
    } else if cap < 4 {
        4
    } else if cap < 8 {
        8
    } else {
        match cap.saturating_mul(8).checked_div(7) {
            Some(b) => match b.checked_next_power_of_two() {
                Some(b) => b,
                None => usize::MAX,
            },
            None => usize::MAX,
        }
    }
}

/// Entries a hash index with `buckets` buckets holds before it grows.
const fn bucket_capacity(buckets: usize) -> usize {
    if buckets < 8 {
        buckets.saturating_sub(1)
    } else {
        buckets / 8 * 7
    }
}

/// The hash index of `buckets` buckets: one word and one control byte per
/// bucket, plus a group of 16 control bytes.
const fn index(buckets: usize) -> usize {
    if buckets == 0 {
        return 0;
    }
    block(
        buckets
            .saturating_mul(size_of::<usize>() + 1)
            .saturating_add(16),
    )
}

/// An object created for `n` entries (map, entry vector and index; not what the entries own).
pub(crate) const fn object(n: usize) -> usize {
    OBJECT + block(n.saturating_mul(ENTRY)) + index(buckets(n))
}

/// Entry vector and index of an object grown to hold at least `want` entries:
/// the number of entries it can then hold, and its bytes.
///
/// An object grows its index to the next power of two of buckets, and its
/// entry vector to as many places as the index holds.
pub(crate) const fn grown_entries(want: usize) -> (usize, usize) {
    let b = buckets(want);
    let places = bucket_capacity(b);
    (
        places,
        block(places.saturating_mul(ENTRY)).saturating_add(index(b)),
    )
}

/// A big integer of `bits` bits (its shared header and digits).
pub(crate) const fn big_int(bits: u64) -> usize {
    block(RC_COUNTS + 32) + block(bits.div_ceil(8) as usize)
}

/// What a number allocates on the heap (big integers and decimal literals).
pub(crate) fn number(n: &Num) -> usize {
    match n {
        Num::Int(_) | Num::Float(_) => 0,
        Num::BigInt(i) => big_int(i.bits()),
        Num::Dec(s) => block(RC_COUNTS + size_of::<String>()) + block(s.len()),
    }
}

/// What storing a copy of `v` in an array or object allocates besides its
/// slot: a string's handle; nothing for other values (arrays, objects and
/// big numbers are shared by reference count).
#[inline]
pub(crate) fn held(v: &Val) -> usize {
    match v {
        Val::TStr(_) | Val::BStr(_) => STRING,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_glibc_chunks() {
        assert_eq!(block(0), 0);
        assert_eq!(block(1), 32);
        assert_eq!(block(24), 32);
        assert_eq!(block(25), 48);
        assert_eq!(block(40), 48);
        assert_eq!(block(1 << 20), (1 << 20) + 16);
        assert_eq!(block(usize::MAX), usize::MAX & !15);
    }

    #[test]
    fn value_sizes() {
        assert_eq!(SLOT, 16);
        assert_eq!(STRING, 48);
        assert_eq!(ARRAY, 48);
        assert_eq!(OBJECT, 96);
        // an object made for one entry: 40 bytes of entries, 4 buckets of index
        assert_eq!(object(1), 96 + 48 + block(4 * 9 + 16));
        assert_eq!(object(0), 96);
        // grown for one entry: the index of 4 buckets holds 3
        assert_eq!(grown_entries(1), (3, block(120) + block(4 * 9 + 16)));
        assert_eq!(grown_entries(7).0, 7);
        assert_eq!(grown_entries(8).0, 14);
        assert_eq!(grown_entries(100).0, 112);
        assert!(grown_entries(usize::MAX).1 > 0);
    }
}
