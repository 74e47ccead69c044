//! The value type the interpreter runs on: jaq-json's [`Val`] plus a bound on
//! its nesting depth, with every operation metered.
//!
//! jaq-core is generic over its value type. Instead of `Val` itself the
//! evaluator runs on [`Value`], whose trait implementations (indexing,
//! iteration, updates, arithmetic, comparison, printing) are written here so
//! that each of them counts steps, charges the memory it is about to allocate,
//! and keeps the nesting depth bounded. The tree below a `Value` is plain `Val`
//! data shared through reference counts, exactly as in jaq-json.
//!
//! `depth` is an upper bound on the nesting depth of `val` (0 for scalars, 1
//! for `[]` or `[1]`, 2 for `[[1]]`, ...). It is exact for parsed documents and
//! for values built from their parts, and it only ever over-estimates for values
//! taken out of a larger one (a child gets the parent's bound minus one). Every
//! constructor of a container refuses a bound above [`MAX_DEPTH`], which keeps
//! all recursive walks over values (printing, comparing, dropping) shallow.

pub(crate) mod ahead;
pub(crate) mod build;
pub(crate) mod cmp;
mod ops;
pub(crate) mod valt;
pub(crate) mod write;

use crate::cost;
use crate::limits::MAX_DEPTH;
use crate::meter::{self, Limit};
use core::fmt;
use jaq_json::{Map, Num, Rc, Val};
/// Longest rendering of a value inside an error message.
const DISPLAY_BYTES: usize = 240;

/// A jq value with a bound on its nesting depth.
#[derive(Clone, Default)]
pub(crate) struct Value {
    pub(crate) val: Val,
    pub(crate) depth: u32,
}

/// jq error carrying [`Value`]s.
pub(crate) type Error = jaq_core::Error<Value>;
/// Value or jq error.
pub(crate) type ValR = Result<Value, Error>;

impl Value {
    /// Wraps a value that is not an array or object.
    pub(crate) fn scalar(val: Val) -> Self {
        debug_assert!(!matches!(val, Val::Arr(_) | Val::Obj(_)));
        Self { val, depth: 0 }
    }

    /// Wraps an array or object whose depth bound is `depth`.
    ///
    /// Unwinds with [`Limit::Depth`] if `depth` exceeds [`MAX_DEPTH`].
    pub(crate) fn container(val: Val, depth: u32) -> Self {
        if depth as usize > MAX_DEPTH {
            meter::trip(Limit::Depth);
        }
        Self { val, depth }
    }

    /// Wraps a value taken out of a container whose depth bound is `parent`.
    pub(crate) fn child(val: Val, parent: u32) -> Self {
        let depth = match val {
            Val::Arr(_) | Val::Obj(_) => parent.saturating_sub(1).max(1),
            _ => 0,
        };
        Self { val, depth }
    }

    /// Wraps a parsed document value whose exact depth is known.
    pub(crate) fn parsed(val: Val, depth: usize) -> Self {
        Self {
            val,
            depth: u32::try_from(depth).unwrap_or(u32::MAX),
        }
    }

    /// `null`.
    pub(crate) fn null() -> Self {
        Self::scalar(Val::Null)
    }

    /// A text string made of `bytes`, charging their buffer.
    ///
    /// The buffer is already allocated: callers bound its size beforehand
    /// (for example by the memory left). Its handle is charged where the
    /// string is stored ([`cost::held`]).
    pub(crate) fn string(bytes: Vec<u8>) -> Self {
        meter::charge(string_buffer(bytes.len(), bytes.capacity()));
        Self::scalar(Val::utf8_str(bytes))
    }

    /// An array of `items` with the given depth bound of its deepest item.
    ///
    /// Charges the array's vector; its slots and what they hold are charged
    /// by whoever filled `items` (see [`build`]).
    pub(crate) fn array(items: Vec<Val>, item_depth: u32) -> Self {
        meter::charge(cost::ARRAY);
        Self::container(Val::Arr(Rc::new(items)), item_depth.saturating_add(1))
    }

    /// An object of `map` with the given depth bound of its deepest value.
    ///
    /// Charges the object's map; its entries are charged by whoever filled
    /// `map` (see [`build`]).
    pub(crate) fn object(map: Map, value_depth: u32) -> Self {
        meter::charge(cost::OBJECT);
        Self::container(Val::obj(map), value_depth.saturating_add(1))
    }

    /// Name of the value's jq type, as returned by `type`.
    pub(crate) fn kind(&self) -> &'static str {
        match self.val {
            Val::Null => "null",
            Val::Bool(_) => "boolean",
            Val::Num(_) => "number",
            Val::BStr(_) | Val::TStr(_) => "string",
            Val::Arr(_) => "array",
            Val::Obj(_) => "object",
        }
    }

    /// Bytes of a (text or byte) string.
    pub(crate) fn str_bytes(&self) -> Option<&[u8]> {
        match &self.val {
            Val::BStr(b) | Val::TStr(b) => Some(b),
            _ => None,
        }
    }

    /// The number, if the value is one.
    pub(crate) fn num(&self) -> Option<&Num> {
        match &self.val {
            Val::Num(n) => Some(n),
            _ => None,
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::scalar(Val::Bool(b))
    }
}

impl From<isize> for Value {
    fn from(i: isize) -> Self {
        Self::scalar(Val::from(i))
    }
}

impl From<usize> for Value {
    fn from(i: usize) -> Self {
        Self::scalar(Val::from(i))
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Self::scalar(Val::from(f))
    }
}

/// Bytes of a string buffer of `len` bytes and capacity `cap` once it is a
/// string value (a buffer with spare room gets a shared header).
pub(crate) fn string_buffer(len: usize, cap: usize) -> usize {
    cost::block(cap) + if len == cap { 0 } else { cost::block(32) }
}

impl From<String> for Value {
    /// A string (jaq-json keeps the `String` as the owner of the bytes).
    fn from(s: String) -> Self {
        meter::charge(cost::block(s.capacity()) + cost::OWNER);
        Self::scalar(Val::from(s))
    }
}

impl From<jaq_core::val::Range<Value>> for Value {
    /// `{"start": s, "end": e}`, leaving out absent bounds (used for slice paths).
    fn from(r: jaq_core::val::Range<Value>) -> Self {
        let mut object = build::Object::new();
        for (k, v) in [("start", r.start), ("end", r.end)] {
            if let Some(v) = v {
                meter::charge(cost::block(k.len()));
                object.insert(Val::utf8_str(k.as_bytes().to_vec()), v);
            }
        }
        object.finish()
    }
}

impl FromIterator<Value> for Value {
    /// Collects an array, counting a step and charging a slot per element.
    fn from_iter<T: IntoIterator<Item = Value>>(iter: T) -> Self {
        let mut array = build::Array::new();
        for x in iter {
            meter::tick(1);
            array.push(x);
        }
        array.finish()
    }
}

impl fmt::Debug for Value {
    /// Same as `Display` (bounded), so that no formatting walks a whole value.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Value({self})")
    }
}

impl fmt::Display for Value {
    /// Compact JSON, cut after a few hundred bytes (used in error messages).
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let mut out = Vec::new();
        let complete = write::write_value(&mut out, &self.val, DISPLAY_BYTES).is_ok();
        let mut text = String::from_utf8_lossy(&out).into_owned();
        if !complete {
            let mut end = text.len().min(DISPLAY_BYTES);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("...");
        }
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::STACK_RESERVE;

    /// `[[[...]]]` nested `depth` levels, built without recursion.
    fn deep(depth: usize) -> Val {
        let mut v = Val::Arr(Rc::new(Vec::new()));
        for _ in 1..depth {
            v = Val::Arr(Rc::new(vec![v]));
        }
        v
    }

    /// The work that runs between metered steps without being metered itself
    /// (dropping, printing, comparing a value of the maximal depth) must fit
    /// into the stack kept in reserve, here with a safety factor of 4.
    #[test]
    fn unmetered_walks_fit_into_the_stack_reserve() {
        let worker = std::thread::Builder::new()
            .stack_size(STACK_RESERVE / 4)
            .spawn(|| {
                let (a, b) = (deep(MAX_DEPTH), deep(MAX_DEPTH));
                let mut out = Vec::new();
                assert!(write::write_value(&mut out, &a, usize::MAX).is_ok());
                assert_eq!(out.len(), 2 * MAX_DEPTH);
                assert!(cmp::equal(&a, &b));
                assert_eq!(cmp::compare(&a, &b), core::cmp::Ordering::Equal);
                let text = Value::container(a.clone(), MAX_DEPTH as u32).to_string();
                assert!(text.ends_with("..."));
                drop(a);
                drop(b);
            })
            .expect("spawn");
        assert!(worker.join().is_ok());
    }

    #[test]
    fn depth_bounds() {
        let v = Value::container(deep(3), 3);
        let child = match &v.val {
            Val::Arr(a) => Value::child(a[0].clone(), v.depth),
            _ => Value::null(),
        };
        assert_eq!(child.depth, 2);
        assert_eq!(Value::child(Val::Null, 5).depth, 0);
        let arr: Value = [v.clone(), Value::null()].into_iter().collect();
        assert_eq!(arr.depth, 4);
        let trip = std::panic::catch_unwind(|| Value::container(Val::Null, MAX_DEPTH as u32 + 1));
        assert!(trip.is_err());
    }
}
