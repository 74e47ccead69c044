//! Parsing and compiling the jq expression with jaq, and turning jaq's
//! parse/compile errors into one-line messages with positions.

use crate::error::QueryError;
use crate::limits::MAX_EXPRESSION_BYTES;
use crate::natives::{self, Ev};
use jaq_core::compile::Undefined;
use jaq_core::load::{self, Arena, File, Loader};

/// A compiled jq program.
pub(crate) type Program = jaq_core::Filter<Ev>;

/// Global variables every program can use.
pub(crate) const GLOBAL_VARS: [&str; 1] = ["$ENV"];

/// Parses and compiles `expr` together with the standard library.
pub(crate) fn compile(expr: &str) -> Result<Program, QueryError> {
    if expr.len() > MAX_EXPRESSION_BYTES {
        return Err(QueryError::BadExpression(format!(
            "the expression is {} bytes long, the limit is {MAX_EXPRESSION_BYTES}",
            expr.len()
        )));
    }
    if expr.trim().is_empty() {
        return Err(QueryError::BadExpression(
            "the expression is empty; use `.` for the whole document".into(),
        ));
    }
    let arena = Arena::default();
    let loader = Loader::new(natives::defs());
    let modules = loader
        .load(
            &arena,
            File {
                code: expr,
                path: (),
            },
        )
        .map_err(|errs| {
            let first = errs.into_iter().next().map(|(_, e)| load_error(expr, e));
            QueryError::BadExpression(first.unwrap_or_else(|| "cannot parse".into()))
        })?;
    jaq_core::Compiler::default()
        .with_funs(natives::funs())
        .with_global_vars(GLOBAL_VARS)
        .compile(modules)
        .map_err(|errs| {
            let undefined = errs.into_iter().flat_map(|(_, e)| e).next();
            let msg = undefined.map(|(name, u)| {
                let what = match u {
                    Undefined::Filter(arity) => format!("{name}/{arity} is not defined"),
                    Undefined::Var => format!("variable {name} is not defined"),
                    Undefined::Label => format!("label {name} is not defined"),
                    Undefined::Mod => format!("module {name} is not available"),
                    _ => format!("{name} is not defined"),
                };
                format!("{what}{}", at(expr, name))
            });
            QueryError::BadExpression(msg.unwrap_or_else(|| "cannot compile".into()))
        })
}

/// One line describing a lex, parse or module error.
fn load_error(expr: &str, e: load::Error<&str>) -> String {
    match e {
        load::Error::Lex(errs) => errs
            .into_iter()
            .next()
            .map(|(expect, rest)| format!("expected {}{}", expect.as_str(), at(expr, rest)))
            .unwrap_or_else(|| "cannot read the expression".into()),
        load::Error::Parse(errs) => errs
            .into_iter()
            .next()
            .map(|(expect, found)| {
                let position = at(expr, found);
                let found = if found.is_empty() {
                    "the end of the expression".to_string()
                } else {
                    format!("`{}`", shorten(found))
                };
                format!("expected {} but found {found}{position}", expect.as_str())
            })
            .unwrap_or_else(|| "cannot parse the expression".into()),
        load::Error::Io(errs) => errs
            .into_iter()
            .next()
            .map(|(path, e)| format!("cannot load module {path}: {e}"))
            .unwrap_or_else(|| "modules are not supported".into()),
    }
}

/// At most 40 characters of a token.
fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() {
        out.push_str("...");
    }
    out
}

/// " at line L column C" if `part` is a slice of `expr`, else "".
fn at(expr: &str, part: &str) -> String {
    let start = expr.as_ptr() as usize;
    let pos = part.as_ptr() as usize;
    if pos < start || pos > start + expr.len() {
        return String::new();
    }
    let offset = pos - start;
    let before = &expr[..offset];
    let line = 1 + before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = 1 + expr[line_start..offset].chars().count();
    format!(" at line {line} column {column}")
}
