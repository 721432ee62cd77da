//! Arbitrary bytes as a GE graph dump (protobuf text): the parser, then the lookups `repro`
//! runs on what it built (ops, kernel names, IR attributes, data inputs, kernel search).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(model) = npgx_parsers::ge_graph::parse(data) else {
        return;
    };
    for r in model.ops() {
        let _ = (r.op.kernel_name(), r.op.block_dim(), r.op.ir_attrs());
        let _ = (r.op.input_ir_names(), r.op.output_ir_names());
        let _ = r.op.data_inputs().count();
    }
    let _ = model.find_kernel("te_add_1__kernel0");
    let _ = model.find_op("Add_1");
});
