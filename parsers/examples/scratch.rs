fn main() {
    for p in std::env::args().skip(1) {
        let t = std::fs::read(&p).unwrap();
        println!("=== {p}");
        println!("CAUSAL {:?}", npgx_parsers::plog::causal::first_causal_error(&t));
        if std::env::var("ONLY_CAUSAL").is_ok() { continue; }
        for e in npgx_parsers::aicore::scan_text(&t) {
            println!("{}", serde_json::to_string(&e).unwrap());
        }
        for r in npgx_parsers::cann_error::parse_reports(&t) {
            println!("REPORT {:?} line {} causal {} end {} msg {:?} items {} tb {}", r.code, r.line, r.causal_line, r.end_line, r.message.as_ref().map(|m| (m.line, &m.text[..m.text.len().min(60)])), r.items.len(), r.traceback.len());
        }
        for e in npgx_parsers::cann_error::parse_torch_npu_lines(&t) { println!("TORCH {e:?}"); }
    }
}
