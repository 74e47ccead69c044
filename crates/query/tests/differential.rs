//! Differential test: the same expressions on the same documents through
//! `run_query` and through the real `jq -c` (/usr/bin/jq); the outputs must be
//! identical line by line. Expressions where jaq and jq legitimately differ are
//! listed in the crate documentation and left out here.

use offload_query::{run_query, QueryLimits};
use std::io::Write;
use std::process::{Command, Stdio};

const JQ: &str = "/usr/bin/jq";

const USERS: &str = r#"{
  "users": [
    {"id": 1, "name": "Ada", "email": "ada@example.com", "role": "admin", "tags": ["x", "y"], "score": 9.5, "active": true, "manager": null},
    {"id": 2, "name": "Bob", "email": "bob@example.org", "role": "user", "tags": [], "score": 7.25, "active": false, "manager": 1},
    {"id": 3, "name": "Cy", "email": "cy@example.com", "role": "admin", "tags": ["y"], "score": 8, "active": true, "manager": 1},
    {"id": 4, "name": "Dee", "email": "dee@example.net", "role": "guest", "tags": ["z", "x", "y"], "score": 3.5, "active": true, "manager": 2}
  ],
  "meta": {"count": 4, "generated": "2024-01-01T00:00:00Z", "source": "it's \"db\""}
}"#;

const NUMBERS: &str = "[3, 1.5, -2, 0, 100, 0.25, 12345.678, -7, 2]";

const STRINGS: &str = r#"{"s": "héllo wörld ✓ 😀", "esc": "line1\nline2\t\"quoted\" \\ back/slash", "ctrl": "\u0001\u001f\u007f\b\f\r", "empty": "", "u": "\u00e9\ud83d\ude00", "html": "<a href=\"x\">&</a>", "uri": "a b&c=d/é?x"}"#;

const NESTED: &str = r#"{"a": {"b": {"c": [1, {"d": "deep"}]}}, "x": [[1, 2], [3, [4, 5]]], "n": null, "t": true, "f": false, "e": {}, "l": []}"#;

const STREAM: &str = "1 [2] {\"a\":3} \"four\" null";

/// (document, expression) pairs compared against jq.
const CASES: &[(&str, &str)] = &[
    (USERS, r#".users[] | select(.role == "admin") | .email"#),
    (USERS, "[.users[] | .name]"),
    (USERS, ".users | map(.score)"),
    (USERS, "keys"),
    (USERS, ".users[0] | keys_unsorted"),
    (USERS, ".users | group_by(.role) | map({role: .[0].role, n: length})"),
    (USERS, ".users | sort_by(.score) | map(.name)"),
    (USERS, ".users | sort_by(.role, -.id) | map(.id)"),
    (USERS, "(.users | length), (.users[0] | length), (.meta.source | length)"),
    (USERS, r#"has("users"), (.users[0] | has("manager")), (.users | has(3)), (.users | has(9))"#),
    (USERS, r#""\(.users[0].name) has id \(.users[0].id) and tags \(.users[0].tags)""#),
    (USERS, ".users[0].score + 1, .users[0].id * 3 - 1, 10 / 4, 7 % 3, -(.users[1].score)"),
    (USERS, r#".users[] | .manager // "none""#),
    (USERS, ".users | map([.id, .name, .score, .active, .manager]) | .[] | @csv"),
    (USERS, ".users | map([.id, .name, .email]) | .[] | @tsv"),
    (USERS, "reduce .users[] as $u (0; . + $u.score)"),
    (USERS, "[limit(2; .users[])] | map(.id)"),
    (USERS, "first(.users[]).name, (.users | first.name), (.users | last.id)"),
    (USERS, r#".users | map(select(.tags | index("x"))) | map(.id)"#),
    (USERS, r#".users | map(.email | split("@")[1]) | unique"#),
    (USERS, r#".users | map(.name | ascii_downcase) | join(", ")"#),
    (USERS, "[.users[] | {name, role}]"),
    (USERS, ".users | any(.active), all(.active)"),
    (USERS, "[.users[].tags[]] | unique"),
    (USERS, ".users | (min_by(.score) | .name), (max_by(.score) | .name)"),
    (USERS, "[.users[] | .score] | add / length"),
    (USERS, ".users | map(.id) | contains([2]), inside([1, 2, 3, 4, 5])"),
    (USERS, r#"[.users[] | select(.name | test("^[A-C]"))] | length"#),
    (USERS, ".users[0] | to_entries[] | select(.value == null) | .key"),
    (USERS, ".meta | to_entries | from_entries"),
    (USERS, ".meta | with_entries(.value |= tostring)"),
    (USERS, r#"(.users[] | select(.id == 2) | .role) = "owner" | .users | map(.role)"#),
    (USERS, ".users | map(.score * 10 | floor)"),
    (USERS, r#".users | map(.email | sub("@.*"; ""))"#),
    (USERS, ".users | unique_by(.role) | map(.name)"),
    (USERS, ".users | INDEX(.id) | keys"),
    (USERS, "label $out | foreach .users[] as $u (0; . + 1; if . > 2 then ., break $out else . end)"),
    (USERS, r#"try error("custom") catch ., (.users[0].name | try error catch .)"#),
    (USERS, "[paths(type == \"number\")] | length"),
    (USERS, "(.users[1:3] | map(.id)), (.users[-1:] | map(.id))"),
    (USERS, ".meta.source | @sh, @json, @text, @base64"),
    (USERS, "del(.users[1:]) | .users | map(.name)"),
    (USERS, ".users | map(.tags | length) | sort | reverse"),
    (USERS, "[.users[] | .id] | map(. % 2 == 0)"),
    (USERS, ".users[0] | [.[] | type]"),
    (USERS, "[.users[] | .name] | combinations(2) | join(\"-\")"),
    (USERS, "([.users[] | .manager] | join(\",\")), ([.users[0][]] | .[:-1] | join(\";\")?), ([] | join(\"x\"))"),
    (USERS, ".users | has(-1), has(0), (.[0].tags | has(1))"),
    (NUMBERS, "map(. * 2)"),
    (NUMBERS, ".[] | tostring"),
    (NUMBERS, "sort, (map(select(. > 0)) | add), min, max"),
    (NUMBERS, "map(floor), map(sqrt | floor), map(fabs)"),
    (NUMBERS, ".[2:4], .[-2:], .[:1], .[100:]"),
    (NUMBERS, "[.[] | . / 3]"),
    (NUMBERS, "map(. * 1.1), map(1e17 * .), map(. / 100000)"),
    (NUMBERS, "[range(0; 10; 3)], [range(5)], [range(0; 1; 0.25)]"),
    (NUMBERS, "map(tostring) | join(\",\")"),
    (NUMBERS, "indices(-2), index(100), (map(tojson) | .[1:3])"),
    (NUMBERS, "[.[] | select(. == 3 or . == 2)] | length"),
    (NUMBERS, "map(-.) | sort_by(.) | .[0], (.[0] | -(. * 1e300) * 1e300)"),
    (NUMBERS, "[limit(3; .[] | select(. < 10))], first(range(10; 0; -3)), isempty(empty)"),
    (NUMBERS, "([nan] | tostring), (infinite | . > 1e308), (infinite | tostring), ([-infinite])"),
    (STRINGS, "."),
    (STRINGS, "[.[] | length]"),
    (STRINGS, ".s[2:5], .s[-3:], .u[1:]"),
    (STRINGS, ".esc | @json, tojson, ."),
    (STRINGS, "[.[] | tojson]"),
    (STRINGS, ".s | explode | implode"),
    (STRINGS, ".s | @base64, (@base64 | @base64d)"),
    (STRINGS, ".html | @html"),
    (STRINGS, ".uri | @uri"),
    (STRINGS, r#".s | ltrimstr("hé"), startswith("hé"), endswith("😀"), ascii_upcase"#),
    (STRINGS, r#".s | gsub("o"; "0"), test("w.rld"), [scan("l+")], [splits(" ")]"#),
    (STRINGS, r#".s | split(" "), (. / "l"), ("a,b, cd, efg" | indices(", "))"#),
    (STRINGS, r#".esc | capture("(?<first>\\w+)\\s(?<second>[a-z]+)")"#),
    (STRINGS, r#".s | [match("l+"; "g") | .offset]"#),
    (STRINGS, ".empty | length, tostring, (. * 0), ascii_downcase"),
    (STRINGS, r#""abc" * 3, ("x,y" | split(",")), ("a" + "b" + .empty)"#),
    (STRINGS, "(.esc | @tsv? // \"no\"), ([.esc, .ctrl] | @tsv)"),
    (STRINGS, "to_entries | map(.key) | sort"),
    (NESTED, "[paths]"),
    (NESTED, "[leaf_paths]"),
    (NESTED, "[..]"),
    (NESTED, "[.. | numbers]"),
    (NESTED, "[.. | strings]"),
    (NESTED, "to_entries"),
    (NESTED, ".missing?, .missing.deeper, (.x | .[0]?), (.t | .[0]?), ([.n[]?] | length)"),
    (NESTED, ".x | flatten, flatten(1)"),
    (NESTED, "del(.a.b), del(.x[0]), del(.a, .t), (to_entries | from_entries | del(.x) | keys_unsorted)"),
    (NESTED, ".a.b.c[1].d |= ascii_upcase"),
    (NESTED, r#"getpath(["a", "b", "c", 0]), setpath(["a", "z"]; 1), getpath(["nope", "x"])"#),
    (NESTED, "if .t then \"yes\" else \"no\" end, if .f then 1 elif .n then 2 else 3 end"),
    (NESTED, ".x | walk(if type == \"number\" then . + 1 else . end)"),
    (NESTED, "[tostream]"),
    (NESTED, "[.[] | type], (.e | length), (.l | length)"),
    (NESTED, ".x | transpose?, (map(length))"),
    (NESTED, ".a * {b: {z: 1}}, ({a: 1} + {b: 2}), ([1, 2, 3] - [2])"),
    (NESTED, ". as {a: {b: $b}, x: [$first]} | $b, $first"),
    (NESTED, "[recurse(.a?, .b?; . != null)] | length"),
    (NESTED, "path(.a.b.c[1]), [path(..)] | length"),
    (NESTED, "to_entries | map(select(.value | type == \"boolean\")) | from_entries"),
    (NESTED, ".x[1][1] |= map(. * 10) | .x"),
    (NESTED, "[.x[] | .[0]] | add"),
    (STREAM, "."),
    (STREAM, "[., input]?"),
    (STREAM, "type"),
];

/// Runs jq -c; `None` if jq reports an error.
fn jq(doc: &str, expr: &str) -> Option<Vec<String>> {
    let mut child = Command::new(JQ)
        .arg("-c")
        .arg(expr)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "the differential test needs jq at {JQ} (apt-get install jq); cannot run it: {e}"
            )
        });
    // jq may exit before reading its input (on a compile error): ignore a broken pipe
    let _ = child.stdin.take().expect("jq stdin").write_all(doc.as_bytes());
    let out = child.wait_with_output().expect("jq output");
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    })
}

#[test]
fn jq_binary_is_installed() {
    let out = Command::new(JQ)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "the differential test needs jq at {JQ} (apt-get install jq); cannot run it: {e}"
            )
        });
    assert!(out.status.success(), "{JQ} --version failed");
}

#[test]
fn same_output_as_jq() {
    assert!(CASES.len() >= 40);
    let mut failures = Vec::new();
    for (doc, expr) in CASES {
        let want = jq(doc, expr);
        let got = run_query(doc.as_bytes(), expr, &QueryLimits::default());
        match (&want, &got) {
            (Some(want), Ok(got)) if *want == got.lines && !got.truncated => {}
            _ => failures.push(format!(
                "expression: {expr}\n  jq:   {want:?}\n  ours: {:?}",
                got.map(|o| o.lines).map_err(|e| e.to_string())
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from jq:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn both_fail_where_jq_fails() {
    let cases = [
        (USERS, ".users.name"),
        (USERS, ".users[0].name[0]"),
        (USERS, r#"{} | .[0]"#),
        (NUMBERS, ". + 1"),
        (NUMBERS, r#"error("stop")"#),
        (NESTED, ".t | length"),
        (NESTED, "{(1): 2}"),
        (NESTED, ".x | implode"),
        (STRINGS, ".s | fromjson"),
    ];
    for (doc, expr) in cases {
        assert_eq!(jq(doc, expr), None, "jq should fail on {expr}");
        let got = run_query(doc.as_bytes(), expr, &QueryLimits::default());
        assert!(
            matches!(got, Err(offload_query::QueryError::Runtime(_))),
            "{expr}: expected a jq error, got {got:?}"
        );
    }
}
