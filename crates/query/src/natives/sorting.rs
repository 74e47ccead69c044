//! `sort_by`, `group_by`, `min_by`, `max_by` (and through them `unique_by`,
//! `unique`, `min`, `max`): as jaq's, but the keys they collect for every
//! element are charged as they are collected.

use super::{Ev, Native};
use crate::cost;
use crate::meter;
use crate::value::{build, Error, Value};
use jaq_core::box_iter::box_once;
use jaq_core::{Bind, Cv, Exn, ValX, ValXs};

/// The outputs of `f` for an element, in order (its sort key).
type Key = Vec<Value>;

pub(super) fn funs() -> Box<[Native]> {
    let f = || [Bind::Fun(())].into();
    Box::new([
        ("sort_by", f(), |cv| box_once(sort_by(cv))),
        ("group_by", f(), |cv| box_once(group_by(cv))),
        ("min_by_or_empty", f(), |cv| {
            extreme_by(cv, |best, y| y < best)
        }),
        ("max_by_or_empty", f(), |cv| {
            extreme_by(cv, |best, y| y >= best)
        }),
    ])
}

/// The elements of the input array (charged copies) and the function `f`.
#[allow(clippy::type_complexity)]
fn elements<'a>(
    mut cv: Cv<'a, Ev>,
) -> Result<(Vec<Value>, impl Fn(Value) -> ValXs<'a, Value>), Exn<'a, Value>> {
    let (f, fc) = cv.0.pop_fun();
    let f = move |v| f.run((fc.clone(), v));
    let xs = jaq_std::ValT::into_seq(cv.1).map_err(|v| Error::typ(v, "array"))?;
    Ok((xs, f))
}

/// The key of `x`: all outputs of `f`, each charged.
fn key<'a>(f: &impl Fn(Value) -> ValXs<'a, Value>, x: &Value) -> Result<Key, Exn<'a, Value>> {
    let mut key = Vec::new();
    for y in f(x.clone()) {
        let y = y?;
        build::reserve(&mut key, 1);
        meter::charge(cost::held(&y.val));
        key.push(y);
    }
    Ok(key)
}

/// Every element with its key, sorted by key (stable, as jaq's).
fn keyed<'a>(cv: Cv<'a, Ev>) -> Result<Vec<(Key, Value)>, Exn<'a, Value>> {
    let (xs, f) = elements(cv)?;
    let mut pairs = Vec::new();
    build::reserve(&mut pairs, xs.len());
    for x in xs {
        pairs.push((key(&f, &x)?, x));
    }
    // comparisons are metered by `Ord for Value`
    pairs.sort_by(|(a, _), (b, _)| a.cmp(b));
    Ok(pairs)
}

fn sort_by(cv: Cv<'_, Ev>) -> ValX<'_, Value> {
    let pairs = keyed(cv)?;
    Ok(pairs.into_iter().map(|(_, x)| x).collect())
}

fn group_by(cv: Cv<'_, Ev>) -> ValX<'_, Value> {
    let pairs = keyed(cv)?;
    let mut groups = build::Array::new();
    let mut group = build::Array::new();
    let mut last: Option<Key> = None;
    for (k, x) in pairs {
        if last.as_ref().is_some_and(|last| *last != k) {
            groups.push(core::mem::take(&mut group).finish());
        }
        group.push(x);
        last = Some(k);
    }
    if last.is_some() {
        groups.push(group.finish());
    }
    Ok(groups.finish())
}

/// The element whose key `better` prefers, if the array is not empty.
fn extreme_by<'a>(cv: Cv<'a, Ev>, better: fn(&Key, &Key) -> bool) -> ValXs<'a, Value> {
    let run = || -> Result<Option<Value>, Exn<'a, Value>> {
        let (xs, f) = elements(cv)?;
        let mut best: Option<(Value, Key)> = None;
        for x in xs {
            let y = key(&f, &x)?;
            match &best {
                Some((_, my)) if !better(my, &y) => {}
                _ => best = Some((x, y)),
            }
        }
        Ok(best.map(|(x, _)| x))
    };
    Box::new(run().transpose().into_iter())
}
