//! A direct evaluator for the expressions models write most: paths, iteration,
//! `select` with comparisons, `and`/`or`/`not`, `[...]` and `length`, as in
//! `.users[] | select(.role == "admin") | .email`.
//!
//! jaq runs every expression through a general interpreter of boxed iterators
//! and closures, about a microsecond and a half per record for a filter like
//! the one above. An expression of the shape recognised here ([`plan`]) is
//! evaluated instead by plain recursion with callbacks, on the same values and
//! through the same metered operations jaq would call (indexing, iterating,
//! comparing, collecting, `length`), so results and output are identical,
//! and the limits hold: one step per term evaluated (about as many as jaq
//! counts), and memory charged for what is built before it is allocated.
//! It builds less than jaq (a literal is shared, not copied), so a filter
//! that jaq stops for memory may finish here. Anything an operation refuses
//! (indexing a string, iterating a number, ...) gives up at once ([`Bail`]):
//! the steps and memory it used are given back, and the query runs again in
//! jaq, which reports the error exactly as before; nothing is printed until
//! the direct evaluation has finished.

use crate::meter;
use crate::natives::json::length;
use crate::value::valt::FieldHint;
use crate::value::{ahead, build, cmp, valt, Value};
use core::cmp::Ordering;
use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Term};
use jaq_core::ops::Cmp;
use jaq_core::path::{Opt, Part};
use jaq_core::ValT;
use jaq_json::Val;

/// An expression of the shape the direct evaluator handles.
#[derive(Debug)]
pub(crate) enum Direct {
    /// `.`
    Id,
    /// A literal: a string without interpolation, an integer, `true`, `false`, `null`.
    Lit(Value),
    /// `f.a[0][]...`: `f`, then each step in turn.
    Path(Box<Direct>, Vec<Step>),
    /// `l | r`
    Pipe(Box<Direct>, Box<Direct>),
    /// `l, r`
    Comma(Box<Direct>, Box<Direct>),
    /// `select(f)`, `f` giving one value.
    Select(Box<Direct>),
    /// `l == r`, `l < r`, ...: each side giving one value.
    Cmp(Box<Direct>, Cmp, Box<Direct>),
    /// `l or r` (`true`) and `l and r` (`false`): each side giving one value.
    Logic(Box<Direct>, bool, Box<Direct>),
    /// `not`
    Not,
    /// `length`
    Length,
    /// `[f]`
    Collect(Box<Direct>),
}

/// One step of a path.
#[derive(Debug)]
pub(crate) enum Step {
    /// `.key`, `.["key"]` or `.[n]`: the index, as jaq would build it, and
    /// where the key was found in the last object indexed (see
    /// [`valt::index_ref`]).
    Index(Value, FieldHint),
    /// `.[]`, and whether what follows reads fields of the elements (then
    /// the records ahead are requested from memory early, see [`ahead`]).
    Each(bool),
}

/// The evaluation stopped: an operation refused its input (the query is then
/// run by jaq, which reports the error).
#[derive(Debug)]
pub(crate) struct Bail;

/// Longest expression compiled into a plan (longer ones go to jaq directly).
const MAX_PLAN_BYTES: usize = 512;
/// Deepest nesting of terms in a plan.
const MAX_PLAN_DEPTH: usize = 32;

/// The direct plan of `expression`, or `None` when it is not of the shape
/// handled here (then jaq runs it). The expression has compiled already.
pub(crate) fn plan(expression: &str) -> Option<Direct> {
    if expression.len() > MAX_PLAN_BYTES {
        return None;
    }
    let term = jaq_core::load::parse(expression, |p| p.term())?;
    let mut plan = lower(&term, 0)?;
    mark_reads(&mut plan, false);
    Some(plan)
}

/// Whether `f` reads a field of some value by name.
fn reads_fields(f: &Direct) -> bool {
    match f {
        Direct::Id | Direct::Lit(_) | Direct::Not | Direct::Length => false,
        Direct::Path(head, steps) => reads_fields(head) || steps.iter().any(by_name),
        Direct::Pipe(l, r)
        | Direct::Comma(l, r)
        | Direct::Cmp(l, _, r)
        | Direct::Logic(l, _, r) => reads_fields(l) || reads_fields(r),
        Direct::Select(f) | Direct::Collect(f) => reads_fields(f),
    }
}

/// Whether `step` is a field read by name (`.key`).
fn by_name(step: &Step) -> bool {
    matches!(
        step,
        Step::Index(
            Value {
                val: Val::TStr(_),
                ..
            },
            _
        )
    )
}

/// Marks each `.[]` of `f` whose elements are read by field afterwards, by
/// the next step of its path or by what `f`'s results go to (`then_read`).
fn mark_reads(f: &mut Direct, then_read: bool) {
    match f {
        Direct::Id | Direct::Lit(_) | Direct::Not | Direct::Length => {}
        Direct::Path(head, steps) => {
            mark_reads(head, steps.first().map_or(then_read, by_name));
            // the elements of a `.[]` are read by field when the step after it
            // names one, or when it is the last step and what follows reads
            for at in 0..steps.len() {
                let next = steps.get(at + 1).map_or(then_read, by_name);
                if let Step::Each(read) = &mut steps[at] {
                    *read = next;
                }
            }
        }
        Direct::Pipe(l, r) => {
            let read = then_read || reads_fields(r);
            mark_reads(l, read);
            mark_reads(r, then_read);
        }
        Direct::Comma(l, r) => {
            mark_reads(l, then_read);
            mark_reads(r, then_read);
        }
        // a condition's value is tested, not read by field
        Direct::Select(f) => mark_reads(f, false),
        Direct::Cmp(l, _, r) | Direct::Logic(l, _, r) => {
            mark_reads(l, false);
            mark_reads(r, false);
        }
        // what follows reads the array built, not its elements
        Direct::Collect(f) => mark_reads(f, false),
    }
}

/// The plan of one parsed term.
fn lower(term: &Term<&str>, depth: usize) -> Option<Direct> {
    if depth > MAX_PLAN_DEPTH {
        return None;
    }
    let sub = |t: &Term<&str>| lower(t, depth + 1).map(Box::new);
    Some(match term {
        Term::Id => Direct::Id,
        Term::Num(n) => Direct::Lit(Value::from(integer(n)?)),
        Term::Str(None, _) => Direct::Lit(plain_string(term)?),
        Term::Arr(Some(f)) => Direct::Collect(sub(f)?),
        Term::Call(name, args) => match (*name, args.as_slice()) {
            ("true", []) => Direct::Lit(Value::from(true)),
            ("false", []) => Direct::Lit(Value::from(false)),
            ("null", []) => Direct::Lit(Value::null()),
            ("not", []) => Direct::Not,
            ("length", []) => Direct::Length,
            ("select", [f]) => {
                let f = sub(f)?;
                single(&f).then_some(Direct::Select(f))?
            }
            _ => return None,
        },
        Term::Path(head, path) => {
            let mut steps = Vec::with_capacity(path.0.len());
            for (part, opt) in &path.0 {
                if !matches!(opt, Opt::Essential) {
                    return None;
                }
                steps.push(match part {
                    Part::Range(None, None) => Step::Each(false),
                    Part::Index(Term::Num(n)) => {
                        Step::Index(Value::from(integer(n)?), FieldHint::default())
                    }
                    Part::Index(key @ Term::Str(None, _)) => {
                        Step::Index(plain_string(key)?, FieldHint::default())
                    }
                    _ => return None,
                });
            }
            Direct::Path(sub(head)?, steps)
        }
        Term::BinOp(l, op, r) => {
            let (l, r) = (sub(l)?, sub(r)?);
            match op {
                BinaryOp::Pipe(None) => Direct::Pipe(l, r),
                BinaryOp::Comma => Direct::Comma(l, r),
                BinaryOp::Cmp(cmp) if single(&l) && single(&r) => Direct::Cmp(l, *cmp, r),
                BinaryOp::Or if single(&l) && single(&r) => Direct::Logic(l, true, r),
                BinaryOp::And if single(&l) && single(&r) => Direct::Logic(l, false, r),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// An integer literal as jaq compiles it (`isize`); others (decimals,
/// exponents, huge integers) are left to jaq.
fn integer(literal: &str) -> Option<isize> {
    if literal.is_empty() || literal.len() > 15 || !literal.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    literal.parse().ok()
}

/// A string literal without format, interpolation or escapes, as a value.
///
/// Built without charging the meter: planning happens before evaluation and
/// must not trip a limit, and the plan is small ([`MAX_PLAN_BYTES`]).
/// Evaluating a literal shares these bytes and allocates nothing.
fn plain_string(term: &Term<&str>) -> Option<Value> {
    let text = match term {
        Term::Str(None, parts) => match parts.as_slice() {
            [] => "",
            [StrPart::Str(s)] => *s,
            _ => return None,
        },
        _ => return None,
    };
    Some(Value::scalar(Val::utf8_str(text.as_bytes().to_vec())))
}

/// Whether `f` gives exactly one value (or fails) for any input.
fn single(f: &Direct) -> bool {
    match f {
        Direct::Id | Direct::Lit(_) | Direct::Not | Direct::Length | Direct::Collect(_) => true,
        Direct::Cmp(..) | Direct::Logic(..) => true,
        Direct::Path(head, steps) => {
            single(head) && steps.iter().all(|s| matches!(s, Step::Index(..)))
        }
        Direct::Pipe(l, r) => single(l) && single(r),
        Direct::Comma(..) | Direct::Select(_) => false,
    }
}

/// What a callback tells the evaluation: go on (`true`) or stop (`false`, an
/// output limit was reached).
pub(crate) type Flow = Result<bool, Bail>;

/// Runs `f` on `input`, handing each result to `emit` in jq's order.
pub(crate) fn run(f: &Direct, input: Value, emit: &mut dyn FnMut(Value) -> Flow) -> Flow {
    // one step per term evaluated, as jaq's interpreter counts one per dispatch
    meter::tick(1);
    match f {
        Direct::Id => emit(input),
        Direct::Lit(v) => emit(v.clone()),
        Direct::Path(head, steps) => run(head, input, &mut |v| walk(steps, v, emit)),
        Direct::Pipe(l, r) => run(l, input, &mut |v| run(r, v, emit)),
        Direct::Comma(l, r) => Ok(run(l, input.clone(), emit)? && run(r, input, emit)?),
        Direct::Select(cond) => {
            if truthy(cond, &input)? {
                emit(input)
            } else {
                Ok(true)
            }
        }
        Direct::Cmp(..) | Direct::Logic(..) => emit(Value::from(truthy(f, &input)?)),
        Direct::Not => emit(Value::from(!input.as_bool())),
        Direct::Length => emit(length(&input).map_err(|_| Bail)?),
        Direct::Collect(f) => {
            // each item is counted and its slot charged as it comes, as jaq collects
            let mut array = build::Array::new();
            run(f, input, &mut |v| {
                meter::tick(1);
                array.push(v);
                Ok(true)
            })?;
            emit(array.finish())
        }
    }
}

/// The one value of `f` (see [`single`]) on `input`.
fn one(f: &Direct, input: Value) -> Result<Value, Bail> {
    let mut out = None;
    run(f, input, &mut |v| {
        out = Some(v);
        Ok(true)
    })?;
    out.ok_or(Bail)
}

/// A value a condition reads: a part of the input, or one it made.
enum Operand<'v> {
    Part(&'v Val),
    Made(Value),
}

impl Operand<'_> {
    fn val(&self) -> &Val {
        match self {
            Operand::Part(v) => v,
            Operand::Made(v) => &v.val,
        }
    }
}

/// Whether the one value of the condition `f` on `input` is true, reading
/// the input's parts in place (no copy of the record or of its fields).
fn truthy(f: &Direct, input: &Value) -> Result<bool, Bail> {
    meter::tick(1);
    match f {
        Direct::Cmp(l, op, r) => {
            let (l, r) = (operand(l, input)?, operand(r, input)?);
            let (l, r) = (l.val(), r.val());
            Ok(match op {
                Cmp::Eq => cmp::equal(l, r),
                Cmp::Ne => !cmp::equal(l, r),
                Cmp::Lt => cmp::compare(l, r) == Ordering::Less,
                Cmp::Le => cmp::compare(l, r) != Ordering::Greater,
                Cmp::Gt => cmp::compare(l, r) == Ordering::Greater,
                Cmp::Ge => cmp::compare(l, r) != Ordering::Less,
            })
        }
        Direct::Logic(l, stop, r) => Ok(if truthy(l, input)? == *stop {
            *stop
        } else {
            truthy(r, input)?
        }),
        Direct::Not => Ok(!input.as_bool()),
        _ => Ok(!matches!(
            operand(f, input)?.val(),
            Val::Null | Val::Bool(false)
        )),
    }
}

/// The one value of `f` (see [`single`]) on `input`, in place when it is a
/// part of the input reached by indexing.
fn operand<'v>(f: &'v Direct, input: &'v Value) -> Result<Operand<'v>, Bail> {
    meter::tick(1);
    match f {
        Direct::Id => Ok(Operand::Part(&input.val)),
        Direct::Lit(v) => Ok(Operand::Part(&v.val)),
        Direct::Path(head, steps) if matches!(**head, Direct::Id) => {
            let mut at = &input.val;
            for step in steps {
                let Step::Index(index, hint) = step else {
                    return Err(Bail);
                };
                match valt::index_ref(at, index, hint) {
                    Some(Some(part)) => at = part,
                    Some(None) => return Ok(Operand::Part(&NULL)),
                    // cases that build their result: the general path
                    None => return one(f, input.clone()).map(Operand::Made),
                }
            }
            Ok(Operand::Part(at))
        }
        _ => one(f, input.clone()).map(Operand::Made),
    }
}

/// `null`, for indexing that finds nothing.
static NULL: Val = Val::Null;

/// Applies `steps` to `v` in turn, handing each result to `emit`.
fn walk(steps: &[Step], v: Value, emit: &mut dyn FnMut(Value) -> Flow) -> Flow {
    let Some((step, rest)) = steps.split_first() else {
        return emit(v);
    };
    match step {
        Step::Index(index, hint) => {
            let part = match valt::index_ref(&v.val, index, hint) {
                Some(Some(part)) => Value::child(part.clone(), v.depth),
                Some(None) => Value::null(),
                None => v.index(index).map_err(|_| Bail)?,
            };
            walk(rest, part, emit)
        }
        Step::Each(read) => {
            if let (true, Val::Arr(items)) = (*read, &v.val) {
                // each element counted and shared as `values` does
                for (at, item) in items.iter().enumerate() {
                    ahead::read_ahead(items, at);
                    meter::tick(1);
                    if !walk(rest, Value::child(item.clone(), v.depth), emit)? {
                        return Ok(false);
                    }
                }
                return Ok(true);
            }
            for item in v.values() {
                if !walk(rest, item.map_err(|_| Bail)?, emit)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{plan, Direct, Step};

    /// The read-ahead marks of every `.[]` of `f`, in order.
    fn marks(f: &Direct, out: &mut Vec<bool>) {
        match f {
            Direct::Id | Direct::Lit(_) | Direct::Not | Direct::Length => {}
            Direct::Path(head, steps) => {
                marks(head, out);
                out.extend(steps.iter().filter_map(|s| match s {
                    Step::Each(read) => Some(*read),
                    Step::Index(..) => None,
                }));
            }
            Direct::Pipe(l, r)
            | Direct::Comma(l, r)
            | Direct::Cmp(l, _, r)
            | Direct::Logic(l, _, r) => {
                marks(l, out);
                marks(r, out);
            }
            Direct::Select(f) | Direct::Collect(f) => marks(f, out),
        }
    }

    #[test]
    fn iterations_read_ahead_when_their_elements_are_read_by_field() {
        for (expr, expected) in [
            (
                "[.users[] | select(.active and .logins > 900)] | length",
                vec![true],
            ),
            (
                r#".users[] | select(.role == "admin") | .email"#,
                vec![true],
            ),
            (".users[].email", vec![true]),
            (".[] | .a[] | .b", vec![true, true]),
            ("[.users[]] | length", vec![false]),
            ("[.users[] | select(false)] | length", vec![false]),
            ("[.users[]] | .a", vec![false]),
            (".[][]", vec![false, false]),
            (".[][] | .a", vec![false, true]),
            (".[] | [.tags[] | .x]", vec![true, true]),
            (".[] | [.tags[]]", vec![true, false]),
            (".[] | .[0]", vec![false]),
        ] {
            let mut out = vec![];
            marks(&plan(expr).expect(expr), &mut out);
            assert_eq!(out, expected, "{expr}");
        }
    }

    #[test]
    fn common_filters_have_a_plan() {
        for expr in [
            r#".users[] | select(.role == "admin") | .email"#,
            "[.users[] | select(.active and .logins > 900)] | length",
            r#".items[] | select(.level == "error" or .status >= 500) | .message, .id"#,
            ".[0].a.b",
            r#".["a key"][]"#,
        ] {
            assert!(plan(expr).is_some(), "{expr}");
        }
    }

    #[test]
    fn other_shapes_are_left_to_jaq() {
        for expr in [
            "def f: .; f",
            ".a?",
            ".[1:2]",
            "-1",
            "1.5",
            r#""\(.a)""#,
            r#""a\nb""#,
            "select(.[] == 1)",
            "map(.a)",
            ".a as $x | $x",
            ".a // 1",
            "{a}",
            "..",
            "length(1)",
        ] {
            assert!(plan(expr).is_none(), "{expr}");
        }
    }
}
