//! A text through every FX graph grammar: torchair's `.py` and `.pbtxt` graph dumps, PyTorch's
//! readable form and an `nn_module_stack` value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::fx_graph::{module_path, parse_pbtxt, parse_readable, parse_torchair_py};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let g = parse_torchair_py(&text);
    for n in &g.nodes {
        let _ = n.source.as_ref().map(|f| f.is_library());
    }
    let _ = parse_readable(&text);
    let _ = parse_pbtxt(&text);
    let _ = module_path(&text);
});
