//! A whole text through the CANN error-report block assembler and the torch_npu line parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::cann_error::{parse_reports, parse_torch_npu_lines};

fuzz_target!(|data: &[u8]| {
    let _ = parse_reports(data);
    let _ = parse_torch_npu_lines(data);
});
