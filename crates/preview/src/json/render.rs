//! Writing a sampled JSON tree as outline lines (the format is described in
//! the crate docs).

use std::collections::HashMap;

use super::tree::{Kind, Node, Tree};
use crate::format::{counted, grouped};

/// How much of the tree an outline shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Members shown per object; the rest are summed up in one line.
    pub keys: usize,
    /// Containers at this level or deeper are collapsed to `{…}` / `[…]`
    /// (the root is level 0: with depth 0 even the root is collapsed).
    pub depth: usize,
    /// Containers smaller than this many bytes are collapsed too (the
    /// elements of an array count as large as the array).
    pub min_bytes: u64,
}

/// The outline did not fit where its lines were going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overflow;

/// Where outline lines go.
pub(crate) trait LineSink {
    /// Takes the next line, or refuses it when it does not fit.
    fn push(&mut self, line: String) -> Result<(), Overflow>;
}

/// Characters shown of a string or number value before `…`.
const SAMPLE_CHARS: usize = 40;
/// Characters shown of a key before `…`.
const KEY_CHARS: usize = 60;
/// Values summarised together at most (sampled elements of sampled arrays).
const MAX_SET: usize = 16;
/// One level of indentation.
const INDENT: &str = "  ";

/// Writes the outline of `tree` within `limits` to `out`. Writes nothing
/// when the root is not an object or an array.
pub(crate) fn render(
    tree: &Tree<'_>,
    limits: Limits,
    out: &mut dyn LineSink,
) -> Result<(), Overflow> {
    Renderer { tree, limits, out }.root()
}

/// What follows a value's description on further lines.
enum Body {
    /// Nothing.
    None,
    /// The members of `objects` (one exact object when `direct`, otherwise
    /// sampled objects merged), at `level`, between `{` and `}`; `scale` is
    /// the size of the nearest exact container.
    Expand {
        objects: Vec<u32>,
        direct: bool,
        level: usize,
        scale: u64,
    },
}

/// The description of a value: its alternatives (one per kind) and sample
/// values of its scalar kinds.
#[derive(Debug, Default)]
struct Desc {
    parts: Vec<String>,
    samples: Vec<String>,
}

impl Desc {
    /// `a | b, e.g. x, y`; when there are several alternatives, one that is
    /// an array (`array[2] of …`) or has samples of its own is put in
    /// parentheses.
    fn as_value(&self) -> String {
        let mut text = if self.parts.len() > 1 {
            let parts: Vec<String> = self
                .parts
                .iter()
                .map(|p| {
                    if p.contains(" of ") || p.contains(", e.g. ") {
                        format!("({p})")
                    } else {
                        p.clone()
                    }
                })
                .collect();
            parts.join(" | ")
        } else {
            self.parts.concat()
        };
        if !self.samples.is_empty() {
            text.push_str(", e.g. ");
            text.push_str(&self.samples.join(", "));
        }
        text
    }

    /// As the element type of an array: in parentheses when there are
    /// several alternatives.
    fn as_element(&self) -> String {
        let text = self.as_value();
        if self.parts.len() > 1 {
            format!("({text})")
        } else {
            text
        }
    }
}

struct Renderer<'t, 'a, 'o> {
    tree: &'t Tree<'a>,
    limits: Limits,
    out: &'o mut dyn LineSink,
}

impl<'a> Renderer<'_, 'a, '_> {
    fn emit(&mut self, line: String) -> Result<(), Overflow> {
        self.out.push(line)
    }

    fn node(&self, index: u32) -> &Node<'a> {
        self.tree.node(index)
    }

    /// Whether a container at `level`, whose nearest exact container is
    /// `scale` bytes long, is shown expanded.
    fn expands(&self, level: usize, scale: u64) -> bool {
        level < self.limits.depth && scale >= self.limits.min_bytes
    }

    fn root(&mut self) -> Result<(), Overflow> {
        let Some(root) = self.tree.root() else {
            return Ok(());
        };
        let lines = counted(self.tree.lines, "line", "lines");
        match root.kind {
            Kind::Object => {
                let keys = counted(root.count, "key", "keys");
                self.emit(format!("[JSON outline: object, {keys}, {lines}]"))?;
                if root.count == 0 {
                    return self.emit("{}".to_owned());
                }
                if self.limits.depth == 0 {
                    return self.emit("{…}".to_owned());
                }
                self.emit("{".to_owned())?;
                self.members(&[0], true, 1, 1, root.size)?;
                self.emit("}".to_owned())
            }
            Kind::Array => {
                let items = counted(root.count, "item", "items");
                self.emit(format!("[JSON outline: array, {items}, {lines}]"))?;
                if root.count == 0 {
                    return self.emit("[]".to_owned());
                }
                if self.limits.depth == 0 {
                    return self.emit("[…]".to_owned());
                }
                self.emit("[".to_owned())?;
                let elements = self.children(&[0]);
                if elements.is_empty() {
                    self.emit(format!("{INDENT}…"))?;
                } else {
                    self.value(&elements, false, 1, 1, "", root.size)?;
                }
                self.emit("]".to_owned())
            }
            _ => Ok(()),
        }
    }

    /// One value (or merged values) with its label, and its body if any;
    /// `scale` is the size of the nearest exact container.
    fn value(
        &mut self,
        set: &[u32],
        direct: bool,
        level: usize,
        indent: usize,
        label: &str,
        scale: u64,
    ) -> Result<(), Overflow> {
        let (desc, body) = self.describe(set, direct, level, true, scale);
        let desc = desc.as_value();
        let pad = INDENT.repeat(indent);
        match body {
            Body::None => self.emit(format!("{pad}{label}{desc}")),
            Body::Expand {
                objects,
                direct,
                level,
                scale,
            } => {
                self.emit(format!("{pad}{label}{desc} {{"))?;
                self.members(&objects, direct, level, indent + 1, scale)?;
                self.emit(format!("{pad}}}"))
            }
        }
    }

    /// The members of one exact object (`direct`) or of sampled objects
    /// merged (keys in order of first appearance, `?` on keys some samples
    /// lack).
    fn members(
        &mut self,
        objects: &[u32],
        direct: bool,
        level: usize,
        indent: usize,
        scale: u64,
    ) -> Result<(), Overflow> {
        let tree = self.tree;
        let mut entries: Vec<(&'a str, Vec<u32>, usize)> = Vec::new();
        let mut index: HashMap<&'a str, usize> = HashMap::new();
        let mut unkept = 0u64;
        for &object in objects {
            let mut kept = 0u64;
            for child in tree.children(object) {
                kept += 1;
                let key = tree.node(child).key.unwrap_or("");
                if direct {
                    entries.push((key, vec![child], 1));
                    continue;
                }
                let slot = *index.entry(key).or_insert_with(|| {
                    entries.push((key, Vec::new(), 0));
                    entries.len() - 1
                });
                let entry = &mut entries[slot];
                entry.2 += 1;
                if entry.1.len() < MAX_SET {
                    entry.1.push(child);
                }
            }
            unkept = unkept.max(tree.node(object).count.saturating_sub(kept));
        }
        let shown = entries.len().min(self.limits.keys);
        for (key, values, presence) in &entries[..shown] {
            let optional = !direct && *presence < objects.len();
            let label = label(key, optional);
            self.value(values, direct, level, indent, &label, scale)?;
        }
        let hidden = u64::try_from(entries.len() - shown).unwrap_or(u64::MAX);
        let more = hidden.saturating_add(unkept);
        if more > 0 {
            let pad = INDENT.repeat(indent);
            let noun = if more == 1 { "key" } else { "keys" };
            self.emit(format!("{pad}… {} more {noun}", grouped(more)))?;
        }
        Ok(())
    }

    /// The kept elements of the arrays in `arrays`, at most [`MAX_SET`].
    fn children(&self, arrays: &[u32]) -> Vec<u32> {
        arrays
            .iter()
            .flat_map(|&a| self.tree.children(a))
            .take(MAX_SET)
            .collect()
    }

    /// The one-line description of the values in `set` (one exact value when
    /// `direct`), and the body that goes with it.
    fn describe(
        &self,
        set: &[u32],
        direct: bool,
        level: usize,
        body_allowed: bool,
        scale: u64,
    ) -> (Desc, Body) {
        let tree = self.tree;
        let of_kind = |kind: Kind| -> Vec<u32> {
            set.iter()
                .copied()
                .filter(|&i| tree.node(i).kind == kind)
                .collect()
        };
        let mut desc = Desc::default();
        let mut body = Body::None;

        let objects = of_kind(Kind::Object);
        if !objects.is_empty() {
            if objects.iter().all(|&o| tree.node(o).count == 0) {
                desc.parts.push("{}".to_owned());
            } else {
                let (mut part, scale) = if direct {
                    let node = self.node(objects[0]);
                    let part = format!(
                        "object, {}{}",
                        counted(node.count, "key", "keys"),
                        self.lines_of(node)
                    );
                    (part, node.size)
                } else {
                    ("object".to_owned(), scale)
                };
                if body_allowed && self.expands(level, scale) {
                    body = Body::Expand {
                        objects,
                        direct,
                        level: level + 1,
                        scale,
                    };
                } else {
                    part.push_str(" {…}");
                }
                desc.parts.push(part);
            }
        }

        let arrays = of_kind(Kind::Array);
        if !arrays.is_empty() {
            let lengths = arrays.iter().map(|&a| tree.node(a).count);
            let (min, max) = lengths.fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
            if max == 0 {
                desc.parts.push("[]".to_owned());
            } else {
                let (mut part, scale) = if direct {
                    let node = self.node(arrays[0]);
                    let part = format!("array[{}]{}", grouped(node.count), self.lines_of(node));
                    (part, node.size)
                } else if min == max {
                    (format!("array[{}]", grouped(max)), scale)
                } else {
                    (format!("array[{}..{}]", grouped(min), grouped(max)), scale)
                };
                let elements = self.children(&arrays);
                if elements.is_empty() {
                    part.push_str(" […]");
                } else if self.expands(level, scale) {
                    let free = body_allowed && matches!(body, Body::None);
                    let (inner, inner_body) =
                        self.describe(&elements, false, level + 1, free, scale);
                    part.push_str(" of ");
                    part.push_str(&inner.as_element());
                    if free {
                        body = inner_body;
                    }
                } else {
                    part.push_str(" of ");
                    part.push_str(&self.kind_names(&elements));
                }
                desc.parts.push(part);
            }
        }

        for kind in [Kind::Number, Kind::String, Kind::Bool] {
            let Some(&first) = of_kind(kind).first() else {
                continue;
            };
            let node = self.node(first);
            if direct {
                desc.parts.push(exact_scalar(node));
            } else {
                desc.parts.push(type_name(kind).to_owned());
                desc.samples.push(sample(node));
            }
        }
        if !of_kind(Kind::Null).is_empty() {
            desc.parts.push("null".to_owned());
        }
        (desc, body)
    }

    /// The kinds of the values in `set`, containers collapsed:
    /// `object {…}`, `array […]`, `string`, `(number | null)`.
    fn kind_names(&self, set: &[u32]) -> String {
        let mut names: Vec<&str> = Vec::new();
        for kind in [
            Kind::Object,
            Kind::Array,
            Kind::Number,
            Kind::String,
            Kind::Bool,
            Kind::Null,
        ] {
            if set.iter().any(|&i| self.node(i).kind == kind) {
                names.push(match kind {
                    Kind::Object => "object {…}",
                    Kind::Array => "array […]",
                    other => type_name(other),
                });
            }
        }
        if names.len() > 1 {
            format!("({})", names.join(" | "))
        } else {
            names.concat()
        }
    }

    /// ` (lines a-b)` or ` (line a)` for a container, when the document has
    /// more than one line.
    fn lines_of(&self, node: &Node<'_>) -> String {
        if self.tree.lines <= 1 {
            String::new()
        } else if node.first_line == node.last_line {
            format!(" (line {})", grouped(node.first_line))
        } else {
            format!(
                " (lines {}-{})",
                grouped(node.first_line),
                grouped(node.last_line)
            )
        }
    }
}

/// `"key": ` or, for a key missing from some samples, `"key"?: `.
fn label(key: &str, optional: bool) -> String {
    let (shown, cut) = truncate_raw(key, KEY_CHARS);
    let ellipsis = if cut { "…" } else { "" };
    let mark = if optional { "?" } else { "" };
    format!("\"{shown}{ellipsis}\"{mark}: ")
}

/// The type name of a scalar kind.
fn type_name(kind: Kind) -> &'static str {
    match kind {
        Kind::String => "string",
        Kind::Number => "number",
        Kind::Bool => "boolean",
        Kind::Null => "null",
        Kind::Object => "object",
        Kind::Array => "array",
    }
}

/// A scalar as a sample: a string in quotes, a number or literal as written,
/// cut to [`SAMPLE_CHARS`] with `…`.
fn sample(node: &Node<'_>) -> String {
    let (shown, cut) = truncate_raw(node.raw, SAMPLE_CHARS);
    let ellipsis = if cut { "…" } else { "" };
    if node.kind == Kind::String {
        format!("\"{shown}{ellipsis}\"")
    } else {
        format!("{shown}{ellipsis}")
    }
}

/// An exact scalar member: `string = "…"`, `number = 42`, `boolean = true`,
/// with the length of a string that is cut.
fn exact_scalar(node: &Node<'_>) -> String {
    let value = sample(node);
    match node.kind {
        Kind::String if value.ends_with("…\"") => {
            format!(
                "string = {value} ({})",
                counted(node.count, "char", "chars")
            )
        }
        kind => format!("{} = {value}", type_name(kind)),
    }
}

/// The start of `raw` (JSON text as written) up to `max` characters,
/// counting an escape sequence as one character and never cutting inside
/// one; and whether anything was left out.
fn truncate_raw(raw: &str, max: usize) -> (&str, bool) {
    let bytes = raw.as_bytes();
    let mut at = 0;
    for _ in 0..max {
        let Some(&byte) = bytes.get(at) else {
            return (raw, false);
        };
        let step = match byte {
            b'\\' if bytes.get(at + 1) == Some(&b'u') => 6,
            b'\\' => 2,
            _ => raw[at..].chars().next().map_or(1, char::len_utf8),
        };
        at = (at + step).min(bytes.len());
    }
    match raw.get(..at) {
        Some(start) if at < bytes.len() => (start, true),
        _ => (raw, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_escapes_whole() {
        assert_eq!(truncate_raw("abc", 3), ("abc", false));
        assert_eq!(truncate_raw("abcd", 3), ("abc", true));
        assert_eq!(truncate_raw("a\\u00e9bc", 2), ("a\\u00e9", true));
        assert_eq!(truncate_raw("a\\nb", 2), ("a\\n", true));
        assert_eq!(truncate_raw("é😀x", 2), ("é😀", true));
        assert_eq!(truncate_raw("", 2), ("", false));
    }

    #[test]
    fn labels() {
        assert_eq!(label("id", false), "\"id\": ");
        assert_eq!(label("email", true), "\"email\"?: ");
        let long = "k".repeat(100);
        assert_eq!(label(&long, false), format!("\"{}…\": ", "k".repeat(60)));
    }
}
