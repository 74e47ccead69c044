//! jaq's value traits for [`Value`]: indexing, slicing, iteration, updates and
//! the helpers the standard library needs.
//!
//! The semantics follow jaq-json's implementation for `Val`, with these
//! differences (all towards jq): object keys must be strings, objects can only
//! be indexed by strings, `null | .a = 1` and `null | .[1] = 1` create an
//! object/array, assigning past the end of an array pads it with `null`, and
//! deleting a key keeps the order of the others.

use super::build::{self, own_array, own_object};
use super::{cmp, write, Error, ValR, Value};
use crate::cost;
use crate::meter;
use bstr::ByteSlice;
use core::cell::{Cell, RefCell};
use jaq_core::box_iter::{box_once, BoxIter};
use jaq_core::path::Opt;
use jaq_core::{val, Exn, ValX};
use jaq_json::{Map, Num, Rc, Val};

const ITERABLE: &str = "iterable (array or object)";

/// An integer index: (non-negative?, magnitude).
#[derive(Clone, Copy)]
struct Index(bool, usize);

impl Index {
    /// Absolute position for a sequence of length `len` (negative counts from the end).
    fn wrap(self, len: usize) -> Option<usize> {
        if self.0 {
            Some(self.1)
        } else {
            len.checked_sub(self.1)
        }
    }
}

/// The value as integer index, if it is an integer.
fn as_index(v: &Value) -> Option<Index> {
    match v.num()? {
        Num::Int(i) => Some(Index(*i >= 0, i.unsigned_abs())),
        n @ Num::BigInt(_) => {
            let negative = *n < Num::Int(0);
            let mag =
                <Val as jaq_std::ValT>::as_isize(&v.val).map_or(usize::MAX, isize::unsigned_abs);
            Some(Index(!negative, mag))
        }
        _ => None,
    }
}

fn int_index(v: &Value) -> Result<Index, Error> {
    as_index(v).ok_or_else(|| Error::typ(v.clone(), "integer"))
}

/// Position inside `[0, len)` for an index.
fn abs_index(i: Index, len: usize) -> Option<usize> {
    i.wrap(len).filter(|i| *i < len)
}

/// A slice bound clipped to `[0, len]`.
fn abs_bound(i: Option<Index>, len: usize, default: usize) -> usize {
    i.map_or(default, |i| i.wrap(len).unwrap_or(0).min(len))
}

/// Slice bounds as integer indices (`null` means absent).
fn slice_bounds(range: val::Range<&Value>) -> Result<(Option<Index>, Option<Index>), Error> {
    let f = |b: Option<&Value>| match b {
        None => Ok(None),
        Some(v) if matches!(v.val, Val::Null) => Ok(None),
        Some(v) => int_index(v).map(Some),
    };
    Ok((f(range.start)?, f(range.end)?))
}

/// (skip, take) of a slice of a sequence of `len` items.
fn skip_take(from: Option<Index>, upto: Option<Index>, len: usize) -> (usize, usize) {
    let from = abs_bound(from, len, 0);
    let upto = abs_bound(upto, len, len);
    (from, upto.saturating_sub(from))
}

/// (skip, take) in bytes of a slice of a string counted in characters.
fn skip_take_chars(from: Option<Index>, upto: Option<Index>, b: &[u8]) -> (usize, usize) {
    meter::tick(1 + b.len() as u64 / 16);
    let byte = |Index(pos, c): Index| {
        let mut starts = b.char_indices().map(|(start, ..)| start);
        if pos {
            starts.nth(c).unwrap_or(b.len())
        } else {
            starts.nth_back(c.saturating_sub(1)).unwrap_or(0)
        }
    };
    let from = from.map_or(0, byte);
    let upto = upto.map_or(b.len(), byte);
    (from, upto.saturating_sub(from))
}

/// Elements of an array, metered, without copying a shared array up front.
enum Elements {
    Owned(std::vec::IntoIter<Val>),
    Shared(Rc<Vec<Val>>, usize),
}

impl Elements {
    fn new(a: Rc<Vec<Val>>) -> Self {
        match Rc::try_unwrap(a) {
            Ok(v) => Self::Owned(v.into_iter()),
            Err(a) => Self::Shared(a, 0),
        }
    }
}

impl Iterator for Elements {
    type Item = Val;
    fn next(&mut self) -> Option<Val> {
        let next = match self {
            Self::Owned(it) => it.next(),
            Self::Shared(a, i) => {
                let x = a.get(*i).cloned();
                *i += 1;
                x
            }
        };
        if next.is_some() {
            meter::tick(1);
        }
        next
    }
}

/// Entries of an object, metered, without copying a shared object up front.
enum Entries {
    Owned(<Map as IntoIterator>::IntoIter),
    Shared(Rc<Map>, usize),
}

impl Entries {
    fn new(o: Rc<Map>) -> Self {
        match Rc::try_unwrap(o) {
            Ok(m) => Self::Owned(m.into_iter()),
            Err(o) => Self::Shared(o, 0),
        }
    }
}

impl Iterator for Entries {
    type Item = (Val, Val);
    fn next(&mut self) -> Option<(Val, Val)> {
        let next = match self {
            Self::Owned(it) => it.next(),
            Self::Shared(o, i) => {
                let x = o.get_index(*i).map(|(k, v)| (k.clone(), v.clone()));
                *i += 1;
                x
            }
        };
        if next.is_some() {
            meter::tick(1);
        }
        next
    }
}

impl Value {
    /// Indices where the array `y` occurs in the array `x` (as jaq's `indices`).
    pub(crate) fn subarray_indices(x: &[Val], y: &[Val]) -> Value {
        let mut out = build::Array::new();
        if y.is_empty() {
            return out.finish();
        }
        for (i, w) in x.windows(y.len()).enumerate() {
            if w.iter().zip(y).all(|(a, b)| cmp::equal(a, b)) {
                out.push_val(Val::from(i), 0);
            }
        }
        out.finish()
    }

    /// `self[index]`, or `None` where jq yields `null`.
    fn index_opt(self, index: &Self) -> Result<Option<Value>, Error> {
        meter::tick(1);
        let d = self.depth;
        Ok(match (&self.val, &index.val) {
            (Val::Null, _) => None,
            (Val::BStr(a), Val::Num(Num::Int(_) | Num::BigInt(_))) => as_index(index)
                .and_then(|i| abs_index(i, a.len()))
                .map(|i| Value::from(usize::from(a[i]))),
            (Val::Arr(a), Val::Num(Num::Int(_) | Num::BigInt(_))) => as_index(index)
                .and_then(|i| abs_index(i, a.len()))
                .map(|i| Value::child(a[i].clone(), d)),
            (Val::Arr(x), Val::Arr(y)) => Some(Self::subarray_indices(x, y)),
            // jq only indexes objects with strings (jaq would yield null)
            (Val::Obj(o), i @ (Val::TStr(_) | Val::BStr(_))) => {
                build::hash_work(i);
                find_key(o, i).map(|v| Value::child(v.clone(), d))
            }
            (Val::BStr(_) | Val::TStr(_) | Val::Arr(_), Val::Obj(o)) => {
                let key = |k: &str| o.get(&Val::utf8_str(k.as_bytes().to_vec()));
                let child = |v: Option<&Val>| v.map(|v| Value::child(v.clone(), 1));
                let (start, end) = (child(key("start")), child(key("end")));
                return jaq_core::ValT::range(self, start.as_ref()..end.as_ref()).map(Some);
            }
            _ => return Err(Error::index(self, index.clone())),
        })
    }

    /// Whether `self[key]` exists (`has`); negative array indices do not exist, as in jq.
    pub(crate) fn has(self, key: &Self) -> Result<bool, Error> {
        if matches!(self.val, Val::Arr(_)) && as_index(key).is_some_and(|i| !i.0) {
            return Ok(false);
        }
        self.index_opt(key).map(|o| o.is_some())
    }
}

impl jaq_core::ValT for Value {
    fn from_num(n: &str) -> ValR {
        meter::tick(1 + n.len() as u64 / 64);
        let v = <Val as jaq_core::ValT>::from_num(n)
            .map(Value::scalar)
            .map_err(|_| Error::str(format_args!("invalid number {n}")))?;
        if let Some(n) = v.num() {
            meter::charge(cost::number(n));
        }
        Ok(v)
    }

    fn from_map<I: IntoIterator<Item = (Self, Self)>>(iter: I) -> ValR {
        let mut object = build::Object::new();
        for (k, v) in iter {
            meter::tick(1);
            if !matches!(k.val, Val::TStr(_)) {
                return Err(Error::str(format_args!(
                    "object keys must be strings, not {} ({k})",
                    k.kind()
                )));
            }
            object.insert(k.val, v);
        }
        Ok(object.finish())
    }

    fn key_values(self) -> BoxIter<'static, Result<(Self, Self), Error>> {
        let d = self.depth;
        match self.val {
            Val::Arr(a) => Box::new(
                Elements::new(a)
                    .enumerate()
                    .map(move |(i, v)| Ok((Value::from(i), Value::child(v, d)))),
            ),
            Val::Obj(o) => Box::new(
                Entries::new(o).map(move |(k, v)| Ok((Value::scalar(k), Value::child(v, d)))),
            ),
            _ => box_once(Err(Error::typ(self, ITERABLE))),
        }
    }

    fn values(self) -> Box<dyn Iterator<Item = ValR>> {
        let d = self.depth;
        match self.val {
            Val::Arr(a) => Box::new(Elements::new(a).map(move |v| Ok(Value::child(v, d)))),
            Val::Obj(o) => Box::new(Entries::new(o).map(move |(_, v)| Ok(Value::child(v, d)))),
            _ => box_once(Err(Error::typ(self, ITERABLE))),
        }
    }

    fn index(self, index: &Self) -> ValR {
        self.index_opt(index).map(|o| o.unwrap_or_else(Value::null))
    }

    fn range(self, range: val::Range<&Self>) -> ValR {
        meter::tick(1);
        let (from, upto) = slice_bounds(range)?;
        let d = self.depth;
        match self.val {
            Val::TStr(b) => {
                let (skip, take) = skip_take_chars(from, upto, &b);
                Ok(Value::scalar(Val::utf8_str(b.slice(skip..skip + take))))
            }
            Val::BStr(b) => {
                let (skip, take) = skip_take(from, upto, b.len());
                Ok(Value::scalar(Val::byte_str(b.slice(skip..skip + take))))
            }
            Val::Arr(a) => {
                let (skip, take) = skip_take(from, upto, a.len());
                let items = build::copy_slice(&a[skip..skip + take]);
                meter::charge(cost::ARRAY);
                Ok(Value::container(Val::Arr(Rc::new(items)), d.max(1)))
            }
            _ => Err(Error::typ(self, "rangeable (array or string)")),
        }
    }

    fn map_values<'a, I: Iterator<Item = ValX<'a, Self>>>(
        self,
        opt: Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a, Self> {
        meter::tick(1);
        let d = self.depth;
        match self.val {
            Val::Arr(a) => {
                let mut out = build::Array::new();
                for x in Elements::new(a) {
                    for y in f(Value::child(x, d)) {
                        out.push(y?);
                    }
                }
                Ok(out.finish())
            }
            Val::Obj(o) => {
                let mut out = build::Object::new();
                for (k, v) in Entries::new(o) {
                    if let Some(y) = f(Value::child(v, d)).next() {
                        out.insert(k, y?);
                    }
                }
                Ok(out.finish())
            }
            _ => opt.fail(self, |v| Exn::from(Error::typ(v, ITERABLE))),
        }
    }

    fn map_index<'a, I: Iterator<Item = ValX<'a, Self>>>(
        self,
        index: &Self,
        opt: Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a, Self> {
        meter::tick(1);
        if let (Val::BStr(_) | Val::TStr(_) | Val::Arr(_), Val::Obj(o)) = (&self.val, &index.val) {
            let key = |k: &str| o.get(&Val::utf8_str(k.as_bytes().to_vec()));
            let child = |v: Option<&Val>| v.map(|v| Value::child(v.clone(), 1));
            let (start, end) = (child(key("start")), child(key("end")));
            return self.map_range(start.as_ref()..end.as_ref(), opt, f);
        }
        let d = self.depth;
        // jq treats `null` as an empty object or array when assigning into it
        let val = match (self.val, &index.val) {
            (Val::Null, Val::TStr(_)) => Val::obj(Map::default()),
            (Val::Null, Val::Num(_)) => Val::Arr(Rc::new(Vec::new())),
            (val, _) => val,
        };
        match val {
            Val::Obj(mut o) => {
                if !matches!(index.val, Val::TStr(_)) {
                    let v = Value::container(Val::Obj(o), d.max(1));
                    return opt.fail(v, |v| Exn::from(Error::index(v, index.clone())));
                }
                let m = own_object(&mut o);
                let mut depth = d.saturating_sub(1);
                build::hash_work(&index.val);
                match m.get_index_of(&index.val) {
                    Some(i) => {
                        let old = m.get_index_mut(i).map(|(_, v)| core::mem::take(v));
                        let old = old.unwrap_or_default();
                        match f(Value::child(old, d)).next().transpose()? {
                            Some(y) => {
                                depth = depth.max(y.depth);
                                if let Some((_, slot)) = m.get_index_mut(i) {
                                    *slot = y.val;
                                }
                            }
                            None => {
                                // keep the order of the other keys, as jq does
                                meter::tick(m.len() as u64 / 64);
                                m.shift_remove_index(i);
                            }
                        }
                    }
                    None => {
                        if let Some(y) = f(Value::null()).next().transpose()? {
                            depth = depth.max(y.depth);
                            build::insert(m, index.val.clone(), y.val);
                        }
                    }
                }
                Ok(Value::object_rc(o, depth))
            }
            Val::Arr(mut a) => {
                let i = match int_index(index).map(|i| (i, i.wrap(a.len()))) {
                    Ok((_, Some(i))) => i,
                    Ok((_, None)) => {
                        let v = Value::container(Val::Arr(a), d.max(1));
                        let oob = Error::str(format_args!("index {index} out of bounds"));
                        return opt.fail(v, |_| Exn::from(oob));
                    }
                    Err(e) => {
                        let v = Value::container(Val::Arr(a), d.max(1));
                        return opt.fail(v, |_| Exn::from(e));
                    }
                };
                let v = own_array(&mut a);
                let mut depth = d.saturating_sub(1);
                if i >= v.len() {
                    // assigning past the end pads with null, as jq does
                    let pad = i + 1 - v.len();
                    build::reserve_slots(v, pad);
                    meter::tick(pad as u64 / 64);
                    v.resize(i + 1, Val::Null);
                }
                let old = core::mem::take(&mut v[i]);
                match f(Value::child(old, d)).next().transpose()? {
                    Some(y) => {
                        depth = depth.max(y.depth);
                        meter::charge(cost::held(&y.val));
                        v[i] = y.val;
                    }
                    None => {
                        meter::tick(v.len() as u64 / 64);
                        v.remove(i);
                    }
                }
                Ok(Value::array_rc(a, depth))
            }
            val => {
                let v = Value::child(val, d + 1);
                opt.fail(v, |v| Exn::from(Error::typ(v, ITERABLE)))
            }
        }
    }

    fn map_range<'a, I: Iterator<Item = ValX<'a, Self>>>(
        self,
        range: val::Range<&Self>,
        opt: Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a, Self> {
        meter::tick(1);
        let d = self.depth;
        let (from, upto) = match slice_bounds(range) {
            Ok(b) => b,
            Err(e) => return opt.fail(self, |_| Exn::from(e)),
        };
        match self.val {
            Val::Arr(mut a) => {
                let (skip, take) = skip_take(from, upto, a.len());
                let part = build::copy_slice(&a[skip..skip + take]);
                meter::charge(cost::ARRAY);
                let part = Value::container(Val::Arr(Rc::new(part)), d.max(1));
                let y = match f(part).next().transpose()? {
                    Some(y) => match y.val {
                        Val::Arr(items) => (items, y.depth),
                        other => {
                            let y = Value::child(other, y.depth + 1);
                            return Err(Exn::from(Error::typ(y, "array")));
                        }
                    },
                    None => (Rc::new(Vec::new()), 0),
                };
                let v = own_array(&mut a);
                build::reserve_slots(v, y.0.len().saturating_sub(take));
                meter::charge(build::held_by(&y.0));
                meter::tick(v.len() as u64 / 64);
                v.splice(skip..skip + take, y.0.iter().cloned());
                Ok(Value::container(Val::Arr(a), d.max(y.1).max(1)))
            }
            Val::TStr(b) | Val::BStr(b) => {
                let (skip, take) = skip_take_chars(from, upto, &b);
                let part = Value::scalar(Val::utf8_str(b.slice(skip..skip + take)));
                let y = match f(part).next().transpose()? {
                    Some(y) => match y.str_bytes() {
                        Some(s) => s.to_vec(),
                        None => return Err(Exn::from(Error::typ(y, "string"))),
                    },
                    None => Vec::new(),
                };
                let len = (b.len() - take).saturating_add(y.len());
                meter::charge(cost::block(len));
                meter::tick(len as u64 / 256);
                let mut out = Vec::with_capacity(len);
                out.extend_from_slice(&b[..skip]);
                out.extend_from_slice(&y);
                out.extend_from_slice(&b[skip + take..]);
                Ok(Value::scalar(Val::utf8_str(out)))
            }
            val => {
                let v = Value::child(val, d + 1);
                opt.fail(v, |v| Exn::from(Error::typ(v, "array")))
            }
        }
    }

    fn as_bool(&self) -> bool {
        !matches!(self.val, Val::Null | Val::Bool(false))
    }

    fn into_string(self) -> Self {
        meter::tick(1);
        match self.val {
            Val::BStr(b) | Val::TStr(b) => Value::scalar(Val::TStr(b)),
            _ => Value::string(self.to_json()),
        }
    }
}

impl Value {
    /// An object from a shared map with the given depth bound of its deepest value.
    fn object_rc(o: Rc<Map>, value_depth: u32) -> Self {
        Self::container(Val::Obj(o), value_depth.saturating_add(1))
    }

    /// An array from a shared vector with the given depth bound of its deepest item.
    fn array_rc(a: Rc<Vec<Val>>, item_depth: u32) -> Self {
        Self::container(Val::Arr(a), item_depth.saturating_add(1))
    }

    /// Compact JSON text of the value, limited by the remaining memory budget.
    ///
    /// The text may take half of the memory left (its buffer grows by
    /// doubling, so its capacity may be twice its length); the caller charges it.
    pub(crate) fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let cap = meter::memory_left() / 2;
        if write::write_metered(&mut out, &self.val, cap).is_err() {
            meter::trip(meter::Limit::Memory);
        }
        out
    }
}

impl jaq_std::ValT for Value {
    fn into_seq<S: FromIterator<Self>>(self) -> Result<S, Self> {
        let d = self.depth;
        match self.val {
            Val::Arr(a) => Ok(Elements::new(a)
                .map(|v| {
                    // the sequence holds a copy of each element
                    meter::charge(cost::VALUE + cost::held(&v));
                    Value::child(v, d)
                })
                .collect()),
            _ => Err(self),
        }
    }

    fn is_int(&self) -> bool {
        matches!(self.val, Val::Num(Num::Int(_) | Num::BigInt(_)))
    }

    fn as_isize(&self) -> Option<isize> {
        <Val as jaq_std::ValT>::as_isize(&self.val)
    }

    fn as_f64(&self) -> Option<f64> {
        <Val as jaq_std::ValT>::as_f64(&self.val)
    }

    fn is_utf8_str(&self) -> bool {
        matches!(self.val, Val::TStr(_))
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        self.str_bytes()
    }

    fn as_sub_str(&self, sub: &[u8]) -> Self {
        match &self.val {
            Val::BStr(b) => Value::scalar(Val::byte_str(b.slice_ref(sub))),
            Val::TStr(b) => Value::scalar(Val::utf8_str(b.slice_ref(sub))),
            // only called on strings by the standard library
            _ => Value::string(sub.to_vec()),
        }
    }

    /// Used by jaq's natives for strings they built: charged after the fact,
    /// except for what the guard in front of the native prepaid
    /// (see [`meter::prepay`]).
    fn from_utf8_bytes(b: impl AsRef<[u8]> + Send + 'static) -> Self {
        let len = b.as_ref().len();
        meter::charge_prepaid(cost::block(len) + cost::OWNER);
        meter::tick(len as u64 / 256);
        Value::scalar(Val::utf8_str(bytes::Bytes::from_owner(b)))
    }
}

/// Where [`index_ref`] found a field last, and an object where the key at that
/// place was the key looked for.
#[derive(Debug, Default)]
pub(crate) struct FieldHint {
    at: Cell<usize>,
    /// Held (a reference count, no copy) so that its key's bytes stay where they
    /// are and cannot change while their address is compared.
    found_in: RefCell<Option<Rc<Map>>>,
}

impl FieldHint {
    /// Whether `key` has the bytes (the same address and length) of the key at
    /// the hinted place of the object remembered.
    fn known(&self, key: &bytes::Bytes) -> bool {
        let found_in = self.found_in.borrow();
        match found_in.as_ref().and_then(|o| o.get_index(self.at.get())) {
            Some((Val::TStr(k) | Val::BStr(k), _)) => {
                k.as_ptr() == key.as_ptr() && k.len() == key.len()
            }
            _ => false,
        }
    }
}

/// `v[index]` by reference, for the cases that take nothing out of `v` but a
/// part of it: `null` (`Some(None)`: jq yields `null`), an object by a string
/// key, an array by an integer. `None` for every other case, which
/// [`Value::index_opt`] handles. Metered as `index_opt` is.
///
/// Records of one array mostly share their layout, and a document's reader
/// gives equal keys the same bytes (see `shared_keys`): the entry where `hint`
/// found the key last is tried first, and when its key's bytes are the ones
/// found there then, it is the key without comparing text. Remembering where
/// costs a reference count, never an allocation. Keys are unique,
/// so an equal key there is the entry `Map::get` finds.
pub(crate) fn index_ref<'v>(
    v: &'v Val,
    index: &Value,
    hint: &FieldHint,
) -> Option<Option<&'v Val>> {
    match (v, &index.val) {
        (Val::Null, _) => {
            meter::tick(1);
            Some(None)
        }
        (Val::Obj(o), i @ (Val::TStr(wanted) | Val::BStr(wanted))) => {
            meter::tick(1);
            build::hash_work(i);
            if let Some((Val::TStr(k) | Val::BStr(k), v)) = o.get_index(hint.at.get()) {
                if hint.known(k) {
                    return Some(Some(v));
                }
                if k[..] == wanted[..] {
                    *hint.found_in.borrow_mut() = Some(Rc::clone(o));
                    return Some(Some(v));
                }
            }
            let found = find_entry(o, i);
            if let Some((at, _)) = found {
                // the remembered object must have the key looked for at the new place
                hint.at.set(at);
                *hint.found_in.borrow_mut() = Some(Rc::clone(o));
            }
            Some(found.map(|(_, v)| v))
        }
        (Val::Arr(a), Val::Num(Num::Int(_) | Num::BigInt(_))) => {
            meter::tick(1);
            Some(
                as_index(index)
                    .and_then(|i| abs_index(i, a.len()))
                    .map(|i| &a[i]),
            )
        }
        _ => None,
    }
}

/// Objects up to this many entries are searched by comparing keys in order
/// (faster than hashing the key for the handful of fields records have).
const SCANNED_OBJECT_ENTRIES: usize = 16;

/// The value under the string `key` in `object`: the same entry `Map::get`
/// finds (keys are unique, and a text and a byte string of the same bytes are
/// equal keys), without hashing the key when the object is small.
fn find_key<'o>(object: &'o jaq_json::Map, key: &Val) -> Option<&'o Val> {
    find_entry(object, key).map(|(_, v)| v)
}

/// [`find_key`], with the position of the entry.
fn find_entry<'o>(object: &'o jaq_json::Map, key: &Val) -> Option<(usize, &'o Val)> {
    let (Val::TStr(wanted) | Val::BStr(wanted)) = key else {
        return object.get_full(key).map(|(at, _, v)| (at, v));
    };
    if object.len() > SCANNED_OBJECT_ENTRIES {
        return object.get_full(key).map(|(at, _, v)| (at, v));
    }
    object.iter().enumerate().find_map(|(at, (k, v))| match k {
        Val::TStr(k) | Val::BStr(k) if k[..] == wanted[..] => Some((at, v)),
        _ => None,
    })
}
