use offload_search::*;
fn unhex(s: &str) -> String { let b: Vec<u8> = (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i+2], 16).unwrap()).collect(); String::from_utf8(b).unwrap() }
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let data = std::fs::read_to_string(path).unwrap();
    let (mut ok, mut bad) = (0, 0);
    for line in data.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let text = unhex(f[0]);
        let pat = if f[1] == "-" { None } else { Some(unhex(&f[1][1..])) };
        let range = if f[2] == "1" { Some(LineRange { start: f[3].parse().unwrap(), end: f[4].parse().unwrap() }) } else { None };
        let ctx: u64 = f[5].parse().unwrap();
        let max: usize = f[6].parse().unwrap();
        let exp = unhex(f[7]);
        let got = search_content(&text, pat.as_deref(), range, ctx, max);
        match got {
            Ok(g) if g == exp => ok += 1,
            other => { bad += 1; if bad <= 8 { println!("MISMATCH pat={:?} text={:?} range={:?} ctx={} max={}\n  exp={:?}\n  got={:?}\n  plan={:?}", pat, text, range, ctx, max, exp, other, pat.as_deref().map(offload_search::js_regex::plan)); } }
        }
    }
    println!("{ok} ok, {bad} bad");
}
