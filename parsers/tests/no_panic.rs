//! Deterministic mutation run over the log grammars (a stable-toolchain companion to the cargo-fuzz
//! targets in `fuzz/`): every byte of a mixed log text is deleted, replaced by an invalid UTF-8 or
//! NUL byte, or followed by a line break, and the text is cut at every position; each variant goes
//! through every line and block parser. The property is "no panic"; the first assertions check
//! that the unmutated text is understood, so the run cannot pass vacuously.

use npgx_parsers::aicore::scan_text;
use npgx_parsers::cann_error::{parse_reports, parse_torch_npu_lines};
use npgx_parsers::causal::first_causal_error;
use npgx_parsers::compiler_diag::parse_diagnostic;
use npgx_parsers::fx_graph::{
    module_path, parse_call, parse_pbtxt, parse_readable, parse_torchair_py,
};
use npgx_parsers::kernel_assert;
use npgx_parsers::plog::parse_records;

const TEXT: &str = "\
[ERROR] RUNTIME(155320,python3):2025-05-08-09:56:18.522.534 [stars_engine.cc:1553]155320 ProcLogicCqReport:[INIT][DEFAULT]Task run failed, device_id=0, stream_id=2, task_id=1, sqe_type=0(ffts), errType=0x1(task exception), sqSwStatus=0
[ERROR] RUNTIME(155320,python3):2025-05-08-09:56:18.526.761 [d.cc:1635]155320 P:[INIT][DEFAULT]The error from device(chipId:0, dieId:0), serial number is 19, there is an aivec error exception, core id is 0, error code = 0, dump info: pc start: 0x12c100014f8c, current: 0x12c1000157d0, su error info: 0x1,0x2, para base: 0x12c1c0000400.
[ERROR] RUNTIME(155320,python3):2025-05-08-09:56:18.526.855 [d.cc:1647]155320 P:[INIT][DEFAULT]The extend info: errcode:(0, 0x8000, 0) errorStr: timeout or trap error. fixp_error0 info: 0x6000046, blk:0, subErrType:2.
[ERROR] RUNTIME(155320,python3):2025-05-08-09:56:18.527.785 [k.cc:1381]155320 P:[INIT][DEFAULT]Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, task_id=1, flip_num=0, fault kernel_name=GatherV3_1_10330, fault kernel info ext=none, program id=0, hash=9005124917278870274.
[ERROR] IDEDD(155320,python3):2025-05-08-09:56:20.763.494 [dump_printf.cpp:548][tid:155320] [ASSERT] [CANN_VERSION : 7.8][TimeStamp : 0] /k/gather_v3_base.h:137: Assertion `(0 <= val && val < this->gxSize_)' Index 100000000 out of range[0 655360)!
[INFO] GE(370,python3):2023-07-13-07:42:40.517.823 [e.cc:255]1432 L:[AIC_INFO] node_name:GatherV2, node_type:GatherV2, stream_id:2, task_id:6
[INFO] GE(370,python3):2023-07-13-07:42:40.518.094 [e.cc:260]1432 L:[AIC_INFO] input:0;shape:[64];format:ND;dtype:DT_FLOAT;addr:0x124080044000
[ERROR] TSCH(-1,null):2020-12-23-17:10:54.083.518 17 (cpuid:0) ../a.c:1193 bs_done_exception_proc: slot_id=0
<exception_print>TIME:2020-12-23-17:10:54.083.569, device_id=0, stream_id=517, task_id=3, exception_code=0xb4060006
<exception_print>####AICORE_INFO_START: core_id=0, AI_CORE_INT=0x1
<exception_print>AIC_ERROR=0x10
[TRACE] HCCL(10972,python3):2023-01-31-02:48:31.222.202 [status:init] [hcom.cc:196][hccl-1][3]hcom init
[ERROR] HCCL(10972,python3):2023-01-31-03:00:11.356.298 [x.cc:237][10972][21499][Wait][A]errNo[0x000000000500000b] client
[rank0]:[W904 09:50:12.024496247 compiler_depend.ts:57] Warning: EZ9999: Inner Error!
EZ9999: [PID: 838] 2025-09-04-09:50:11.954.378 The error from device(chipId:6, dieId:0), serial number is 8, there is an exception of aivec error, core id is 40, error code = 0[FUNC:P][FILE:d.cc][LINE:303]
TraceBack (most recent call last):
Kernel task happen error, retCode=0x31, [vector core exception].[FUNC:P][FILE:k.cc][LINE:1539]
[ERROR] RecentErrMsg: [PID: 1613532] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed to allocate memory.
        Possible Cause: Available memory is insufficient.
        TraceBack (most recent call last):
       coreId( 0):        0x800000    [FUNC:P][FILE:d.cc][LINE:472]
[rank6]: [ERROR] (PID:360123, Device:6, RankID:6) ERR01100 OPS call acl api failed.
[rank6]: AclNN_Runtime_Error(EZ9903): InitTilingParseCtx failed
loc(callsite(\"k.py\":3:4 at \"k.mlir\":1:1)): error: ub overflow, requires 9 bits while 8 bits available!
/s/k.cpp:24:10: fatal error: 'cstdint' file not found
RuntimeError: ({'errCode': 'E90003', 'detailed_cause': 'bf16'}, 'Compile operator failed')
(Worker_TP0 pid=363) ERROR 12-12 12:10:10 [m.py:822] [ERROR] RUNTIME(1,):2026-09-10-08:52:41.377.875 [s.cc:1746]2 G:[DFX_INFO]AI Core kernel execution failed, device_id=9, stream_id=47, task_id=23064, fault kernel_name=M_1, program id=
";

fn run_all(text: &[u8]) -> usize {
    let mut n = parse_records(text).len();
    for r in parse_records(text) {
        n += r.content().stages.len();
    }
    n += scan_text(text).len();
    n += parse_reports(text).len();
    n += parse_torch_npu_lines(text).len();
    n += usize::from(first_causal_error(text).is_some());
    n += String::from_utf8_lossy(text)
        .lines()
        .filter(|l| parse_diagnostic(l).is_some())
        .count();
    n += String::from_utf8_lossy(text)
        .lines()
        .filter_map(kernel_assert::parse)
        .filter(|a| a.source_line.is_some())
        .count();
    n
}

#[test]
fn the_unmutated_text_is_understood() {
    let t = TEXT.as_bytes();
    assert_eq!(parse_records(t).len(), 11);
    assert!(scan_text(t).len() >= 3);
    assert_eq!(parse_reports(t).len(), 3);
    assert_eq!(parse_torch_npu_lines(t).len(), 1);
    assert_eq!(first_causal_error(t).map(|c| c.line), Some(1));
    let diagnostics = TEXT.lines().filter(|l| parse_diagnostic(l).is_some());
    assert_eq!(diagnostics.count(), 3);
    let asserts: Vec<_> = TEXT.lines().filter_map(kernel_assert::parse).collect();
    assert_eq!(asserts.len(), 1);
    assert_eq!(asserts[0].source_line, Some(137));
}

/// Runs `run` on `base` cut at every `step`-th position and with the byte there deleted,
/// replaced by `odd` or by an invalid UTF-8 byte, or preceded by a line break; sums what it
/// returns. The positions are shared out over the cores (the parsers are unoptimised in the
/// test build: one thread took half a minute of cold CI).
fn mutated(base: &[u8], step: usize, odd: u8, run: impl Fn(&[u8]) -> usize + Sync) -> usize {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let positions: Vec<usize> = (0..base.len()).step_by(step).collect();
    let run = &run;
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                let mine = positions.iter().skip(k).step_by(threads).copied();
                s.spawn(move || mine.map(|i| mutations_at(base, i, odd, run)).sum::<usize>())
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .sum()
    })
}

/// [`mutated`] at one position: the text cut there, and its four mutations.
fn mutations_at(base: &[u8], i: usize, odd: u8, run: impl Fn(&[u8]) -> usize) -> usize {
    let mut total = run(&base[..i]);
    for m in 0..4u8 {
        let mut v = base.to_vec();
        match m {
            0 => {
                v.remove(i);
            }
            1 => v[i] = 0xff,
            2 => v[i] = odd,
            _ => v.insert(i, b'\n'),
        }
        total += run(&v);
    }
    total
}

#[test]
fn mutations_never_panic() {
    assert!(mutated(TEXT.as_bytes(), 6, 0, run_all) > 0);
}

/// The FX graph texts (torchair's `.py` and `.pbtxt` graph dumps, PyTorch's readable form),
/// mutated alike.
const FX: &str = "\
arg0_1_0 = ge.Data(index=0, dtype=0, shape=[2], placement=\"NPU\", node_name=\"arg0_1\")
# File \"/m.py\", line 3, in forward    y = x + 1
## FX Code: add: torch.float32[2]cpu = torch.ops.aten.add.Tensor(arg0_1: torch.float32[2]cpu, 1)
Add_0 = ge.Add(arg0_1_0, ge.Const(1, dtype=0), node_name=\"Add\")
[SplitV_0, SplitV_1] = ge.SplitV(Add_0, ge.Const([1, 1], dtype=3), 0, num_split=2)
         # File: /m.py:3 in forward, code: y = x + 1
        add: \"f32[2]\" = torch.ops.aten.add.Tensor(arg0_1, 1)
node {
  name: \"Add\"
  attr { key: \"[o]y\" value { s: \"key: \\\"_fx_tensor_name\\\" value { s: \\\"add-aten.add.Tensor.OUTPUT.0\\\" }\" } }
  attr { key: \"nn_module_stack\" value { s: \"{'a': ('m.b', x)}\" } }
}
";

fn run_fx(text: &[u8]) -> usize {
    let t = String::from_utf8_lossy(text);
    let g = parse_torchair_py(&t);
    let calls: usize = g
        .nodes
        .iter()
        .chain(parse_readable(&t).iter())
        .filter_map(|n| n.args.as_deref())
        .map(|a| {
            let c = parse_call(a);
            c.args.len() + c.kwargs.len()
        })
        .sum();
    calls
        + parse_call(&t).args.len()
        + g.nodes.iter().map(|n| n.ge_ops.len() + 1).sum::<usize>()
        + parse_readable(&t).len()
        + parse_pbtxt(&t)
            .iter()
            .map(|o| o.fx_tensors.len() + usize::from(o.module.is_some()))
            .sum::<usize>()
        + usize::from(module_path(&t).is_some())
}

#[test]
fn fx_graph_mutations_never_panic() {
    let g = parse_torchair_py(FX);
    assert_eq!(g.inputs, ["arg0_1"]);
    assert_eq!(g.nodes[0].ge_ops, ["Add", "SplitV"]);
    assert_eq!(
        parse_call(g.nodes[0].args.as_deref().unwrap()).args.len(),
        2
    );
    let pb = parse_pbtxt(FX);
    assert_eq!(pb[0].fx_tensors, ["add-aten.add.Tensor.OUTPUT.0"]);
    assert_eq!(pb[0].module.as_deref(), Some("m.b"));
    assert!(mutated(FX.as_bytes(), 1, b'"', run_fx) > 0);
}
