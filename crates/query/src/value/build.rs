//! Building and copying arrays, objects and strings, charging their memory
//! (see [`crate::cost`]) before it is allocated.
//!
//! Vectors and maps grow by doubling, as the standard library does, but the
//! growth is done here explicitly so that each new capacity is charged before
//! it is allocated. Storing a value charges what its copy holds
//! ([`cost::held`]).

use super::Value;
use crate::cost;
use crate::meter;
use bytes::BytesMut;
use jaq_json::{Map, Rc, Val};

/// Makes room for `add` more elements in `v`, charging the new capacity
/// first (vectors grow to at least twice their capacity).
pub(crate) fn reserve<T>(v: &mut Vec<T>, add: usize) {
    let (len, cap) = (v.len(), v.capacity());
    let need = len.saturating_add(add);
    if need <= cap {
        return;
    }
    let grown = need.max(cap.saturating_mul(2)).max(4);
    let size = core::mem::size_of::<T>();
    meter::charge(cost::block(grown.saturating_mul(size)) - cost::block(cap * size));
    v.reserve_exact(grown - len);
}

/// Makes room for `add` more bytes in `s`, charging the new capacity first.
pub(crate) fn reserve_text(s: &mut String, add: usize) {
    let (len, cap) = (s.len(), s.capacity());
    let need = len.saturating_add(add);
    if need <= cap {
        return;
    }
    let grown = need.max(cap.saturating_mul(2));
    meter::charge(cost::block(grown) - cost::block(cap));
    s.reserve_exact(grown - len);
}

/// Makes room for `add` more slots in `v`, charging the new capacity first.
#[inline]
pub(crate) fn reserve_slots(v: &mut Vec<Val>, add: usize) {
    reserve(v, add);
}

/// Makes room for `add` more entries in `m`, charging the new capacity first.
pub(crate) fn reserve_entries(m: &mut Map, add: usize) {
    let (len, cap) = (m.len(), m.capacity());
    let need = len.saturating_add(add);
    if need <= cap {
        return;
    }
    let (places, bytes) = cost::grown_entries(need.max(cap.saturating_mul(2)));
    let before = if cap == 0 {
        0
    } else {
        cost::grown_entries(cap).1
    };
    meter::charge(bytes.saturating_sub(before));
    m.reserve(places - len);
}

/// Makes room for `add` more bytes in `buf`, charging the new capacity first.
pub(crate) fn reserve_bytes(buf: &mut BytesMut, add: usize) {
    let (len, cap) = (buf.len(), buf.capacity());
    let need = len.saturating_add(add);
    if need <= cap {
        return;
    }
    let grown = need.max(cap.saturating_mul(2));
    meter::charge(cost::block(grown) - cost::block(cap));
    buf.reserve(grown - len);
}

/// What the copies of `items` hold besides their slots (string handles).
pub(crate) fn held_by(items: &[Val]) -> usize {
    meter::tick(items.len() as u64 / 64);
    items.iter().map(cost::held).sum()
}

/// What the copies of the keys and values of `m` hold besides their entries.
fn held_by_map(m: &Map) -> usize {
    meter::tick(m.len() as u64 / 64);
    m.iter().map(|(k, v)| cost::held(k) + cost::held(v)).sum()
}

/// Makes the array uniquely owned, charging its copy if it is shared.
pub(crate) fn own_array(a: &mut Rc<Vec<Val>>) -> &mut Vec<Val> {
    if Rc::get_mut(a).is_none() {
        meter::charge(cost::array(a.len()) + held_by(a));
    }
    Rc::make_mut(a)
}

/// Makes the object uniquely owned, charging its copy if it is shared.
pub(crate) fn own_object(o: &mut Rc<Map>) -> &mut Map {
    if Rc::get_mut(o).is_none() {
        meter::charge(cost::object(o.capacity()) + held_by_map(o));
    }
    Rc::make_mut(o)
}

/// A copy of `items`, charged.
pub(crate) fn copy_slice(items: &[Val]) -> Vec<Val> {
    meter::charge(cost::slots(items.len()) + held_by(items));
    items.to_vec()
}

/// An array being built.
#[derive(Default)]
pub(crate) struct Array {
    items: Vec<Val>,
    depth: u32,
}

impl Array {
    /// An empty array.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Appends a value, charging its slot and what it holds.
    #[inline]
    pub(crate) fn push(&mut self, v: Value) {
        self.push_val(v.val, v.depth);
    }

    /// Appends a value with the given depth bound.
    #[inline]
    pub(crate) fn push_val(&mut self, v: Val, depth: u32) {
        if self.items.len() == self.items.capacity() {
            reserve_slots(&mut self.items, 1);
        }
        let held = cost::held(&v);
        if held > 0 {
            meter::charge(held);
        }
        self.depth = self.depth.max(depth);
        self.items.push(v);
    }

    /// The finished array.
    pub(crate) fn finish(self) -> Value {
        Value::array(self.items, self.depth)
    }
}

/// An object being built.
#[derive(Default)]
pub(crate) struct Object {
    map: Map,
    depth: u32,
}

impl Object {
    /// An empty object.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Inserts an entry, charging it and what its key and value hold.
    pub(crate) fn insert(&mut self, k: Val, v: Value) {
        insert(&mut self.map, k, v.val);
        self.depth = self.depth.max(v.depth);
    }

    /// The finished object.
    pub(crate) fn finish(self) -> Value {
        Value::object(self.map, self.depth)
    }
}

/// Inserts an entry into a map, charging it (and the hashing of its key) first.
pub(crate) fn insert(m: &mut Map, k: Val, v: Val) {
    if m.len() == m.capacity() {
        reserve_entries(m, 1);
    }
    meter::charge(cost::held(&k) + cost::held(&v));
    hash_work(&k);
    m.insert(k, v);
}

/// Counts the steps of hashing or comparing a key (its length).
#[inline]
pub(crate) fn hash_work(k: &Val) {
    if let Val::TStr(s) | Val::BStr(s) = k {
        if s.len() >= 64 {
            meter::tick(s.len() as u64 / 64);
        }
    }
}
