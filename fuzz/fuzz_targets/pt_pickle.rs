//! Arbitrary bytes as the `data.pkl` of a `.pt` archive: the restricted pickle reader, a full
//! walk of the value graph it builds, and the tensor-rebuild recogniser.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = npgx_parsers::pickle::parse(data) {
        p.walk(p.root, |_, _| true);
    }
    if let Ok(tensors) = npgx_parsers::dump::pt::saved_tensors(data) {
        for t in tensors {
            let _ = (t.dense(), t.byte_span(u64::from(u32::MAX)));
        }
    }
});
