//! Arbitrary bytes through every dump decoder: framing probe, v2/v1/TLV headers, Opdebug
//! payloads, file names, directory layouts, stats CSV, mapping.csv, padded device layouts and
//! msprobe's dump.json, stack.json and call names.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    npgx_parsers::dump::fuzz::all(data);
    npgx_parsers::msprobe::fuzz::all(data);
});
