fn main() {
    let data = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let (mut ok, mut bad) = (0, 0);
    for line in data.lines() {
        let (h, v) = line.split_once('\t').unwrap();
        let units: Vec<u16> = (0..h.len()).step_by(4).map(|i| u16::from_str_radix(&h[i..i+4], 16).unwrap()).collect();
        let got = offload_search::js_regex::parse::parse(&units);
        if got.is_ok() == (v == "1") { ok += 1 } else { bad += 1; if bad < 15 { println!("{:?} js={} ours={:?}", String::from_utf16_lossy(&units), v, got.err()); } }
    }
    println!("{ok} ok, {bad} bad");
}
