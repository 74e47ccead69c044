//! Equality and ordering of values, with the semantics of jaq-json (which are
//! jq's: `null < false < true < numbers < strings < arrays < objects`, objects
//! compared by their sorted keys, then by the values in key order).
//!
//! Every visited node counts one step, so comparing large values (or values
//! that share their parts, such as `[$x, $x]` nested many times) cannot run
//! unbounded. Recursion depth is bounded by the nesting depth of the values.

use super::Value;
use crate::meter;
use core::cmp::Ordering;
use jaq_json::{Map, Num, Rc, Val};

/// Counts the steps of reading decimal literals, which operations on
/// numbers parse (in proportion to their length).
#[inline]
pub(crate) fn num_work(x: &Num, y: &Num) {
    if let Num::Dec(s) = x {
        meter::tick(s.len() as u64 / 256);
    }
    if let Num::Dec(s) = y {
        meter::tick(s.len() as u64 / 256);
    }
}

/// Rank of a value's type in jq's order.
fn rank(v: &Val) -> u8 {
    match v {
        Val::Null => 0,
        Val::Bool(_) => 1,
        Val::Num(_) => 2,
        Val::BStr(_) | Val::TStr(_) => 3,
        Val::Arr(_) => 4,
        Val::Obj(_) => 5,
    }
}

/// jq's total order on values.
pub(crate) fn compare(a: &Val, b: &Val) -> Ordering {
    meter::tick(1);
    match (a, b) {
        (Val::Null, Val::Null) => Ordering::Equal,
        (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
        (Val::Num(x), Val::Num(y)) => {
            num_work(x, y);
            x.cmp(y)
        }
        (Val::BStr(x) | Val::TStr(x), Val::BStr(y) | Val::TStr(y)) => {
            meter::tick(x.len().min(y.len()) as u64 / 256);
            x.cmp(y)
        }
        (Val::Arr(x), Val::Arr(y)) => {
            if Rc::ptr_eq(x, y) {
                return Ordering::Equal;
            }
            for (l, r) in x.iter().zip(y.iter()) {
                match compare(l, r) {
                    Ordering::Equal => {}
                    other => return other,
                }
            }
            x.len().cmp(&y.len())
        }
        (Val::Obj(x), Val::Obj(y)) => match (x.len(), y.len()) {
            (0, 0) => Ordering::Equal,
            (0, _) => Ordering::Less,
            (_, 0) => Ordering::Greater,
            _ if Rc::ptr_eq(x, y) => Ordering::Equal,
            _ => compare_objects(x, y),
        },
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Entries of an object sorted by key.
fn sorted(m: &Map) -> Vec<(&Val, &Val)> {
    meter::tick(m.len() as u64);
    let mut entries: Vec<_> = m.iter().collect();
    entries.sort_by(|(k1, _), (k2, _)| compare(k1, k2));
    entries
}

fn compare_objects(x: &Map, y: &Map) -> Ordering {
    let (l, r) = (sorted(x), sorted(y));
    let keys = l.iter().map(|(k, _)| *k);
    let keys_r = r.iter().map(|(k, _)| *k);
    let by_keys = keys
        .zip(keys_r)
        .map(|(a, b)| compare(a, b))
        .find(|o| o.is_ne());
    let by_keys = by_keys.unwrap_or_else(|| l.len().cmp(&r.len()));
    if by_keys.is_ne() {
        return by_keys;
    }
    let mut by_values = l.iter().zip(r.iter()).map(|((_, a), (_, b))| compare(a, b));
    by_values.find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
}

/// jq's equality on values (numbers compare by value, object key order is ignored).
pub(crate) fn equal(a: &Val, b: &Val) -> bool {
    meter::tick(1);
    match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Num(x), Val::Num(y)) => {
            num_work(x, y);
            x == y
        }
        (Val::BStr(x) | Val::TStr(x), Val::BStr(y) | Val::TStr(y)) => {
            meter::tick(x.len().min(y.len()) as u64 / 256);
            x == y
        }
        (Val::Arr(x), Val::Arr(y)) => {
            Rc::ptr_eq(x, y)
                || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(l, r)| equal(l, r)))
        }
        (Val::Obj(x), Val::Obj(y)) => {
            Rc::ptr_eq(x, y)
                || (x.len() == y.len()
                    && x.iter().all(|(k, v)| {
                        meter::tick(1);
                        y.get(k).is_some_and(|w| equal(v, w))
                    }))
        }
        _ => false,
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        equal(&self.val, &other.val)
    }
}

impl Eq for Value {}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        compare(&self.val, &other.val)
    }
}
