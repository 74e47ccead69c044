use std::time::Instant;
fn main() {
    let text = std::fs::read_to_string("/tmp/srch/big.txt").unwrap();
    for _ in 0..3 {
    let t0 = Instant::now();
    let idx = offload_search::lines::LineIndex::new(&text);
    let t1 = Instant::now();
    let n = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let t2 = Instant::now();
    let f = memchr::memmem::Finder::new("xyz_nomatch");
    let r = f.find(text.as_bytes());
    let t3 = Instant::now();
    println!("index {:?} count {:?} memmem {:?} {} {} {:?}", t1-t0, t2-t1, t3-t2, idx.count(), n, r);
    }
}
