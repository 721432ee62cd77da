//! A text through both FX graph grammars: torchair's `.py` graph dump and PyTorch's readable form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::fx_graph::{parse_readable, parse_torchair_py};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let g = parse_torchair_py(&text);
    for n in &g.nodes {
        let _ = n.source.as_ref().map(|f| f.is_library());
    }
    let _ = parse_readable(&text);
});
