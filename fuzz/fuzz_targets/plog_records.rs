//! A whole text through the record assembler, the first-causal-error ranking and the reader of
//! the versions and framework a paste states.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::causal::first_causal_error;
use npgx_parsers::plog::parse_records;

fuzz_target!(|data: &[u8]| {
    for r in parse_records(data) {
        let _ = r.content();
    }
    let _ = first_causal_error(data);
    let _ = npgx_parsers::versions::stated(&String::from_utf8_lossy(data));
});
