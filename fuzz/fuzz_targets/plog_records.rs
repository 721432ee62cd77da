//! A whole text through the record assembler and the first-causal-error ranking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::causal::first_causal_error;
use npgx_parsers::plog::parse_records;

fuzz_target!(|data: &[u8]| {
    for r in parse_records(data) {
        let _ = r.content();
    }
    let _ = first_causal_error(data);
});
