use std::time::Instant;
fn main() {
    let text = std::fs::read_to_string("/tmp/srch/big.txt").unwrap();
    for p in std::env::args().skip(1) {
        let t0 = Instant::now();
        let mut r = Ok(String::new());
        for _ in 0..3 { r = offload_search::search_content(&text, Some(&p), None, 5, 10000); }
        let dt = t0.elapsed().as_secs_f64() * 1000.0 / 3.0;
        let s = match &r { Ok(s) => s.chars().take(60).collect::<String>().replace('\n', " "), Err(e) => format!("ERR {e}") };
        println!("{p:?} {dt:.1} ms {} {s}", r.as_ref().map(|s| s.len()).unwrap_or(0));
    }
}
