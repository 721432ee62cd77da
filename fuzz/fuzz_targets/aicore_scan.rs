//! A whole text through the AI Core / AI Vector / FFTS+ block assembler.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::aicore::scan_text;

fuzz_target!(|data: &[u8]| {
    let _ = scan_text(data);
});
