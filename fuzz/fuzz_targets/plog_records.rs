//! A whole text through the record assembler, the first-causal-error ranking, the reader of
//! the versions and framework a paste states, and the reader of where it was cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::causal::first_causal_error;
use npgx_parsers::plog::parse_records;

fuzz_target!(|data: &[u8]| {
    for r in parse_records(data) {
        let _ = r.content();
    }
    let _ = first_causal_error(data);
    let text = String::from_utf8_lossy(data);
    let _ = npgx_parsers::versions::stated(&text);
    let mut cut = npgx_parsers::causal::cut::CutReader::new();
    for (i, line) in text.lines().enumerate() {
        cut.push(i as u64 + 1, line);
    }
    let _ = cut.finish();
});
