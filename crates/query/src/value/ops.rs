//! Arithmetic on values (`+ - * / %` and negation), following jaq-json's
//! semantics, with every allocation charged before it happens.
//!
//! Differences to jaq-json: integer results wider than [`MAX_INT_BITS`] bits are
//! computed as floating-point numbers instead (jq computes all arithmetic in
//! doubles), so squaring a number repeatedly cannot exhaust memory.

use super::build::{self, own_array, own_object};
use super::{Error, ValR, Value};
use crate::cost;
use crate::meter;
use bstr::ByteSlice;
use bytes::{Bytes, BytesMut};
use jaq_core::ops::Math;
use jaq_json::{Map, Num, Rc, Val};

/// Widest integer (in bits) kept exact by `+`, `-` and `*`.
pub(crate) const MAX_INT_BITS: u64 = 4096;

/// Bits needed for an integer, or `None` for non-integers.
fn int_bits(n: &Num) -> Option<u64> {
    match n {
        Num::Int(_) => Some(64),
        Num::BigInt(b) => Some(b.bits()),
        _ => None,
    }
}

/// The number as a double.
fn as_f64(n: &Num) -> f64 {
    <Val as jaq_std::ValT>::as_f64(&Val::Num(n.clone())).unwrap_or(f64::NAN)
}

/// Applies `+`, `-` or `*` to two numbers, falling back to doubles for huge integers.
fn num_op(op: Math, x: Num, y: Num) -> Num {
    meter::tick(1);
    super::cmp::num_work(&x, &y);
    if let (Some(bx), Some(by)) = (int_bits(&x), int_bits(&y)) {
        let bits = match op {
            Math::Mul => bx + by,
            _ => bx.max(by) + 1,
        };
        if bits > MAX_INT_BITS {
            let (fx, fy) = (as_f64(&x), as_f64(&y));
            return Num::Float(match op {
                Math::Add => fx + fy,
                Math::Sub => fx - fy,
                _ => fx * fy,
            });
        }
        // big integer arithmetic costs time proportional to the operand size
        meter::tick(bits / 256);
        if bits > 64 {
            meter::charge(cost::big_int(bits));
        }
    }
    match op {
        Math::Add => x + y,
        Math::Sub => x - y,
        _ => x * y,
    }
}

/// Concatenates two strings, reusing the left buffer when it is not shared.
///
/// Counts a step per 256 bytes copied.
fn concat(l: Bytes, r: &[u8]) -> Bytes {
    meter::tick(r.len() as u64 / 256);
    let mut buf = match l.try_into_mut() {
        Ok(buf) => buf,
        Err(l) => {
            meter::tick(l.len() as u64 / 256);
            let mut buf = BytesMut::new();
            build::reserve_bytes(&mut buf, l.len().saturating_add(r.len()));
            buf.extend_from_slice(&l);
            buf
        }
    };
    build::reserve_bytes(&mut buf, r.len());
    buf.extend_from_slice(r);
    buf.freeze()
}

/// Adds the entries of `r` to `l` (the `+` of two objects).
fn add_entries(l: &mut Rc<Map>, r: &Map) {
    meter::tick(r.len() as u64 / 16);
    let m = own_object(l);
    for (k, v) in r.iter() {
        build::insert(m, k.clone(), v.clone());
    }
}

/// Deep-merges object `r` into object `l` (the `*` of two objects).
///
/// The result is never nested deeper than the deeper of the two operands.
fn obj_merge(l: &mut Rc<Map>, r: Rc<Map>) {
    let l = own_object(l);
    let r = Rc::try_unwrap(r).unwrap_or_else(|r| {
        meter::charge(cost::object(r.capacity()));
        (*r).clone()
    });
    for (k, v) in r {
        meter::tick(1);
        build::hash_work(&k);
        match (l.get_mut(&k), v) {
            (Some(Val::Obj(lo)), Val::Obj(ro)) => obj_merge(lo, ro),
            (Some(slot), v) => *slot = v,
            (None, v) => build::insert(l, k, v),
        }
    }
}

impl core::ops::Add for Value {
    type Output = ValR;
    fn add(self, rhs: Self) -> ValR {
        meter::tick(1);
        let depth = self.depth.max(rhs.depth);
        match (self.val, rhs.val) {
            // `null` is neutral
            (Val::Null, val) | (val, Val::Null) => Ok(Value { val, depth }),
            (Val::Num(x), Val::Num(y)) => Ok(Value::scalar(Val::Num(num_op(Math::Add, x, y)))),
            (Val::TStr(l), Val::TStr(r)) => Ok(Value::scalar(Val::utf8_str(concat(*l, &r)))),
            (Val::BStr(l), Val::BStr(r)) => Ok(Value::scalar(Val::byte_str(concat(*l, &r)))),
            (Val::Arr(mut l), Val::Arr(r)) => {
                let v = own_array(&mut l);
                build::reserve_slots(v, r.len());
                meter::charge(build::held_by(&r));
                v.extend(r.iter().cloned());
                Ok(Value::container(Val::Arr(l), depth))
            }
            (Val::Obj(mut l), Val::Obj(r)) => {
                add_entries(&mut l, &r);
                Ok(Value::container(Val::Obj(l), depth))
            }
            (l, r) => Err(math_error(l, Math::Add, r, depth)),
        }
    }
}

impl core::ops::Sub for Value {
    type Output = ValR;
    fn sub(self, rhs: Self) -> ValR {
        meter::tick(1);
        let depth = self.depth.max(rhs.depth);
        match (self.val, rhs.val) {
            (Val::Num(x), Val::Num(y)) => Ok(Value::scalar(Val::Num(num_op(Math::Sub, x, y)))),
            (Val::Arr(mut l), Val::Arr(r)) => {
                // comparisons are metered by `Ord for Value`; a set entry
                // takes about twice the size of a value
                let rd = depth;
                let remove: std::collections::BTreeSet<Value> = r
                    .iter()
                    .map(|x| {
                        meter::charge(2 * cost::VALUE + cost::held(x));
                        Value::child(x.clone(), rd)
                    })
                    .collect();
                own_array(&mut l).retain(|x| !remove.contains(&Value::child(x.clone(), rd)));
                Ok(Value::container(Val::Arr(l), depth))
            }
            (l, r) => Err(math_error(l, Math::Sub, r, depth)),
        }
    }
}

impl core::ops::Mul for Value {
    type Output = ValR;
    fn mul(self, rhs: Self) -> ValR {
        meter::tick(1);
        let depth = self.depth.max(rhs.depth);
        match (self.val, rhs.val) {
            (Val::Num(x), Val::Num(y)) => Ok(Value::scalar(Val::Num(num_op(Math::Mul, x, y)))),
            (s @ (Val::BStr(_) | Val::TStr(_)), Val::Num(n @ (Num::Int(_) | Num::BigInt(_))))
            | (Val::Num(n @ (Num::Int(_) | Num::BigInt(_))), s @ (Val::BStr(_) | Val::TStr(_))) => {
                Ok(repeat(s, &n))
            }
            (Val::Obj(mut l), Val::Obj(r)) => {
                obj_merge(&mut l, r);
                Ok(Value::container(Val::Obj(l), depth))
            }
            (l, r) => Err(math_error(l, Math::Mul, r, depth)),
        }
    }
}

/// `string * n`: the string repeated `n` times, `null` for `n <= 0`.
fn repeat(s: Val, n: &Num) -> Value {
    let times = <Val as jaq_std::ValT>::as_isize(&Val::Num(n.clone()))
        .unwrap_or(if as_f64(n) > 0.0 { isize::MAX } else { 0 });
    let Ok(times) = usize::try_from(times) else {
        return Value::null();
    };
    if times == 0 {
        return Value::null();
    }
    let (bytes, text) = match s {
        Val::TStr(b) => (b, true),
        Val::BStr(b) => (b, false),
        _ => return Value::null(),
    };
    meter::charge(cost::block(bytes.len().saturating_mul(times)));
    meter::tick((bytes.len().saturating_mul(times) / 1024) as u64);
    let out = bytes.repeat(times);
    Value::scalar(if text {
        Val::utf8_str(out)
    } else {
        Val::byte_str(out)
    })
}

impl core::ops::Div for Value {
    type Output = ValR;
    fn div(self, rhs: Self) -> ValR {
        meter::tick(1);
        let depth = self.depth.max(rhs.depth);
        match (self.val, rhs.val) {
            (Val::Num(x), Val::Num(y)) => {
                super::cmp::num_work(&x, &y);
                Ok(Value::scalar(Val::Num(x / y)))
            }
            (Val::TStr(x), Val::TStr(y)) => Ok(split(*x, &y, Val::utf8_str)),
            (Val::BStr(x), Val::BStr(y)) => Ok(split(*x, &y, Val::byte_str)),
            (l, r) => Err(math_error(l, Math::Div, r, depth)),
        }
    }
}

/// `string / separator`: the pieces between separators (as jaq's `split/1`).
///
/// The pieces are counted first, so that the array and the pieces' handles
/// are charged before any of them is allocated.
fn split(x: Bytes, sep: &[u8], make: fn(Bytes) -> Val) -> Value {
    // characters are decoded one by one; separators are found with a fast search
    meter::tick(1 + x.len() as u64 / if sep.is_empty() { 16 } else { 256 });
    let count = if x.is_empty() {
        0
    } else if sep.is_empty() {
        x.chars().count()
    } else {
        x.find_iter(sep).count() + 1
    };
    meter::tick(count as u64);
    meter::charge(cost::slots(count).saturating_add(count.saturating_mul(cost::STRING)));
    let mut items = Vec::with_capacity(count);
    if x.is_empty() {
    } else if sep.is_empty() {
        items.extend(x.char_indices().map(|(s, e, _)| make(x.slice(s..e))));
    } else {
        items.extend(x.split_str(sep).map(|p| make(x.slice_ref(p))));
    }
    Value::array(items, 0)
}

impl core::ops::Rem for Value {
    type Output = ValR;
    fn rem(self, rhs: Self) -> ValR {
        meter::tick(1);
        let depth = self.depth.max(rhs.depth);
        match (self.val, rhs.val) {
            (Val::Num(x), Val::Num(y)) => {
                super::cmp::num_work(&x, &y);
                let int = |n: &Num| matches!(n, Num::Int(_) | Num::BigInt(_));
                if int(&x) && int(&y) && y == Num::Int(0) {
                    Err(math_error(Val::Num(x), Math::Rem, Val::Num(y), depth))
                } else {
                    Ok(Value::scalar(Val::Num(x % y)))
                }
            }
            (l, r) => Err(math_error(l, Math::Rem, r, depth)),
        }
    }
}

impl core::ops::Neg for Value {
    type Output = ValR;
    fn neg(self) -> ValR {
        meter::tick(1);
        match self.val {
            Val::Num(n) => Ok(Value::scalar(Val::Num(-n))),
            _ => Err(Error::typ(self, "number")),
        }
    }
}

/// `cannot calculate l op r`.
fn math_error(l: Val, op: Math, r: Val, depth: u32) -> Error {
    Error::math(Value::child(l, depth + 1), op, Value::child(r, depth + 1))
}
