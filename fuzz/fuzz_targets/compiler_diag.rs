//! Every line of a text through the compiler-diagnostic grammar and the wrapper test.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::compiler_diag::{is_compile_wrapper, parse_diagnostic};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = parse_diagnostic(line);
        let _ = is_compile_wrapper(line);
    }
});
