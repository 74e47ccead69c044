//! The filters available to expressions: jaq's standard library, with every
//! native whose work or output can outgrow what its input was charged
//! re-implemented or guarded here, so that it counts its steps and charges
//! its memory before building its output.
//!
//! - [`json`]: `tojson`, `fromjson`, `length`, `contains`, `has`, `indices`,
//!   `bsearch` (jaq-json's natives, which only exist for its own value type),
//!   `input`, and the refused `env`, `debug`, `stderr`.
//! - [`strings`]: `explode` and `implode` (jq's code points, invalid ones are
//!   errors), `startswith`, `endswith`, `ltrimstr`, `rtrimstr`, `trim`,
//!   `ltrim`, `rtrim` (steps for the bytes they compare or scan), and the
//!   guard that prepays the output of jaq's string natives (`@html` 6×,
//!   `@uri` 3×, `@sh` 4×, `@base64` 2×, ...).
//! - [`sorting`]: `sort_by`, `group_by`, `min_by`, `max_by` (the keys they
//!   collect are charged).
//! - [`dates`]: `strftime`, `strflocaltime`, `gmtime`, `localtime`, `mktime`,
//!   `strptime`, `todate`, `fromdate`; all in UTC (the host's time zone is not
//!   revealed), formatting charged directive by directive.
//! - [`regex`]: `test`, `match`, `capture`, `scan`, `split/2`, `splits`,
//!   `sub`, `gsub` on the metered engine of [`crate::regex`].
//! - `compat.jq`: jq filters missing from jaq (`@csv`, `@tsv`, `leaf_paths`,
//!   `toarray`, `IN`, `INDEX`, `tostream`) and jq's `join`.
//!
//! `env` and `$ENV` are empty objects (the host's environment is private);
//! `debug` and `stderr` pass their input through without logging;
//! `input_filename`, `$__loc__`, `input_line_number`, modules and
//! `include`/`import` are not available. `halt` and `halt_error` end the query
//! with an error.

mod dates;
pub(crate) mod json;
mod regex;
mod sorting;
mod strings;

use crate::meter;
use crate::value::Value;
use jaq_core::load::parse::{BinaryOp, Def, Term};
use jaq_core::native::{Filter, Fun};
use jaq_core::{DataT, RunPtr};

/// Marker type binding jaq's interpreter to [`Value`] and [`Data`].
pub(crate) struct Ev;

impl DataT for Ev {
    type V<'a> = Value;
    type Data<'a> = Data<'a>;
}

/// Global data of one evaluation: the program and the remaining inputs.
#[derive(Clone)]
pub(crate) struct Data<'a> {
    pub(crate) lut: &'a jaq_core::Lut<Ev>,
    pub(crate) inputs: jaq_std::input::Inputs<'a, Value>,
}

impl<'a> jaq_core::data::HasLut<'a, Ev> for Data<'a> {
    /// Called by the interpreter on every dispatch of a term: one step.
    fn lut(&self) -> &'a jaq_core::Lut<Ev> {
        meter::tick(1);
        self.lut
    }
}

impl<'a> jaq_std::input::HasInputs<'a, Value> for Data<'a> {
    fn inputs(&self) -> jaq_std::input::Inputs<'a, Value> {
        self.inputs
    }
}

/// A native filter of this crate.
type Native = Filter<RunPtr<Ev>>;

/// Names of jaq's natives replaced here, and the names their originals keep
/// (prefixed with `!`, which expressions cannot spell): the string natives
/// are still used behind their guard, the others are unreachable.
fn hidden(name: &'static str) -> &'static str {
    match name {
        "ascii_downcase" => "!ascii_downcase",
        "ascii_upcase" => "!ascii_upcase",
        "escape_html" => "!escape_html",
        "unescape_html" => "!unescape_html",
        "encode_uri" => "!encode_uri",
        "decode_uri" => "!decode_uri",
        "encode_base64" => "!encode_base64",
        "decode_base64" => "!decode_base64",
        "escape_sh" => "!escape_sh",
        "matches" => "!matches",
        "split_matches" => "!split_matches",
        "split_" => "!split_",
        "explode" => "!explode",
        "implode" => "!implode",
        "startswith" => "!startswith",
        "endswith" => "!endswith",
        "ltrimstr" => "!ltrimstr",
        "rtrimstr" => "!rtrimstr",
        "trim" => "!trim",
        "ltrim" => "!ltrim",
        "rtrim" => "!rtrim",
        "sort_by" => "!sort_by",
        "group_by" => "!group_by",
        "min_by_or_empty" => "!min_by_or_empty",
        "max_by_or_empty" => "!max_by_or_empty",
        "strftime" => "!strftime",
        "strflocaltime" => "!strflocaltime",
        "gmtime" => "!gmtime",
        "localtime" => "!localtime",
        "mktime" => "!mktime",
        "strptime" => "!strptime",
        "todateiso8601" => "!todateiso8601",
        "fromdateiso8601" => "!fromdateiso8601",
        other => other,
    }
}

/// All native filters, the ones defined here first (the first match wins).
pub(crate) fn funs() -> Vec<Fun<Ev>> {
    let own = [
        json::funs(),
        strings::funs(),
        sorting::funs(),
        dates::funs(),
        regex::funs(),
    ]
    .into_iter()
    .flat_map(|fs| fs.into_vec());
    let input = jaq_std::input::funs::<Ev>().into_vec().into_iter();
    let own = own
        .chain(input)
        .map(|(name, args, f)| (name, args, jaq_core::Native::<Ev>::new(f)));
    let std = jaq_std::funs::<Ev>().map(|(name, args, f)| (hidden(name), args, f));
    own.chain(jaq_core::funs()).chain(std).collect()
}

/// Prelude definitions: jaq's, with the guard definitions placed before the
/// standard library (so that it uses them) and compatibility additions after it.
pub(crate) fn defs() -> Vec<Def<&'static str>> {
    let mut defs: Vec<_> = jaq_core::defs().collect();
    defs.extend(guard_defs());
    defs.extend(jaq_std::defs());
    defs.extend(jaq_json::defs());
    defs.extend(jaq_core::load::parse(COMPAT_DEFS, |p| p.defs()).unwrap_or_default());
    defs
}

/// jq filters missing from jaq's standard library.
const COMPAT_DEFS: &str = include_str!("compat.jq");

/// `name(args): guard | !name(args)` as a definition.
fn guarded(
    name: &'static str,
    args: &[&'static str],
    guard: Term<&'static str>,
) -> Def<&'static str> {
    let call_args = args.iter().map(|a| Term::Var(*a)).collect();
    let body = Term::BinOp(
        Box::new(guard),
        BinaryOp::Pipe(None),
        Box::new(Term::Call(hidden(name), call_args)),
    );
    Def {
        name,
        args: args.to_vec(),
        body,
    }
}

/// The guards of jaq's string natives: each prepays the largest output its
/// native can build from its input.
fn guard_defs() -> Vec<Def<&'static str>> {
    strings::PREPAID_NATIVES
        .into_iter()
        .map(|(name, factor)| {
            let guard = Term::Call("!prepay", vec![Term::Num(factor)]);
            guarded(name, &[], guard)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn compatibility_definitions_parse() {
        let extra = jaq_core::load::parse(super::COMPAT_DEFS, |p| p.defs()).unwrap_or_default();
        assert_eq!(extra.len(), 10);
    }
}
