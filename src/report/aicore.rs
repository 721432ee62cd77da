//! Rendering for `npgx aicore`: one block per error (table), the JSON document, or CSV rows.

use std::fmt::Display;
use std::io::{self, Write};

use npgx_parsers::aicore::Fact;

use super::plog::csv_row;
use crate::plog::{AicoreScan, FileAicoreError};

/// JSON: the `npgx.aicore` document of docs/aicore.md (envelope of docs/json.md), the error
/// records under `errors`.
pub fn json(out: &mut impl Write, scan: &AicoreScan) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &value(scan)?)?;
    writeln!(out)
}

/// The `npgx.aicore` document as a value (what `npgx mcp`'s `aicore` returns).
pub fn value(scan: &AicoreScan) -> serde_json::Result<serde_json::Value> {
    super::document(
        crate::plog::aicore::SCHEMA_NAME,
        crate::plog::aicore::SCHEMA_VERSION,
        &scan.document(),
    )
}

fn kind_name(e: &FileAicoreError) -> String {
    serde_json::to_value(e.error.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn fact<T: Display>(label: &str, f: &Option<Fact<T>>, parts: &mut Vec<String>) {
    if let Some(f) = f {
        parts.push(format!("{label} {} (L{})", f.value, f.line));
    }
}

pub fn table(out: &mut impl Write, scan: &AicoreScan) -> io::Result<()> {
    if scan.errors.is_empty() {
        writeln!(
            out,
            "no AI Core / AI Vector / FFTS+ / AI CPU error found in {} file(s)",
            scan.files.len()
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{} device error(s) in {} file(s)",
        scan.errors.len(),
        scan.files.len()
    )?;
    for (i, fe) in scan.errors.iter().enumerate() {
        let e = &fe.error;
        writeln!(out)?;
        let pid = e.pid.map(|p| format!("  pid {p}")).unwrap_or_default();
        writeln!(
            out,
            "#{} {}  {}:{}-{}{pid}",
            i + 1,
            kind_name(fe),
            fe.file.display(),
            e.first_line,
            e.last_line
        )?;
        let mut ids = Vec::new();
        fact("device", &e.device_id, &mut ids);
        fact("chip", &e.chip_id, &mut ids);
        fact("die", &e.die_id, &mut ids);
        fact("stream", &e.stream_id, &mut ids);
        fact("report_stream", &e.report_stream_id, &mut ids);
        fact("task", &e.task_id, &mut ids);
        fact("task_pos", &e.task_pos, &mut ids);
        fact("flip_num", &e.flip_num, &mut ids);
        fact("context", &e.context_id, &mut ids);
        if !ids.is_empty() {
            writeln!(out, "  {}", ids.join("  "))?;
        }
        let mut lines: Vec<String> = Vec::new();
        fact("kernel", &e.kernel_name, &mut lines);
        fact("func", &e.func_name, &mut lines);
        fact("node", &e.aic_info.node_name, &mut lines);
        fact("node_type", &e.aic_info.node_type, &mut lines);
        fact("dev_func", &e.aic_info.dev_func, &mut lines);
        fact("op", &e.op_name, &mut lines);
        fact("so", &e.so_name, &mut lines);
        fact("kernel info ext", &e.kernel_info_ext, &mut lines);
        for l in lines {
            writeln!(out, "  {l}")?;
        }
        let mut meta = Vec::new();
        fact("program id", &e.program_id, &mut meta);
        fact("hash", &e.hash, &mut meta);
        fact("blockDim", &e.block_dim, &mut meta);
        fact("tilingKey", &e.tiling_key, &mut meta);
        if !meta.is_empty() {
            writeln!(out, "  {}", meta.join("  "))?;
        }
        let mut codes = Vec::new();
        fact("retCode", &e.ret_code, &mut codes);
        fact("ACL", &e.acl_code, &mut codes);
        fact("inner", &e.inner_code, &mut codes);
        fact("err_type", &e.err_type, &mut codes);
        fact("error_code", &e.task_error_code, &mut codes);
        fact("exception_code", &e.exception_code, &mut codes);
        for c in &e.cann_codes {
            codes.push(format!("{} (L{})", c.value, c.line));
        }
        if !codes.is_empty() {
            writeln!(out, "  codes: {}", codes.join("  "))?;
        }
        for d in &e.decoded {
            writeln!(out, "    = {d}")?;
        }
        for c in &e.cores {
            let mut parts = Vec::new();
            fact("serial", &c.serial, &mut parts);
            fact("core", &c.core_id, &mut parts);
            fact("core list", &c.core_list, &mut parts);
            fact("device", &c.device, &mut parts);
            fact("error code", &c.error_code, &mut parts);
            if let Some(f) = &c.errcode {
                parts.push(format!("errcode ({}) (L{})", f.value.join(", "), f.line));
            }
            fact("subErrType", &c.sub_err_type, &mut parts);
            fact("blk", &c.blk, &mut parts);
            writeln!(out, "  core: {}", parts.join("  "))?;
            if let Some(f) = &c.error_str {
                writeln!(out, "    errorStr: {} (L{})", f.value, f.line)?;
            }
            for b in &c.error_bits {
                writeln!(out, "    bit: {b}")?;
            }
            if let Some(pc) = c.registers.iter().find(|r| r.name == "pc start") {
                if let Some(cur) = c.registers.iter().find(|r| r.name == "current") {
                    writeln!(
                        out,
                        "    pc start {}  current {} (L{})",
                        pc.value, cur.value, pc.line
                    )?;
                }
            }
        }
        for t in &e.aic_info.tensors {
            let v = &t.value;
            writeln!(
                out,
                "  {} {}: shape {} {} {} (L{})",
                v.io,
                v.index,
                v.shape.as_deref().unwrap_or("?"),
                v.dtype.as_deref().unwrap_or("?"),
                v.format.as_deref().unwrap_or("?"),
                t.line
            )?;
        }
        for d in &e.dump_files {
            writeln!(out, "  dump: {} (L{})", d.value, d.line)?;
        }
        for a in &e.asserts {
            writeln!(
                out,
                "  kernel assert: {} (L{})",
                kernel_assert_text(&a.value),
                a.line
            )?;
        }
    }
    let remedy = scan.remedy();
    if !remedy.is_empty() {
        writeln!(out)?;
        write!(out, "{}", super::triage::remedy_text(&remedy, ""))?;
    }
    Ok(())
}

/// A failed assertion of the kernel's code in one line: ``FILE:LINE: `CONDITION` failed: MESSAGE``.
pub(crate) fn kernel_assert_text(a: &npgx_parsers::aicore::KernelAssert) -> String {
    let place = match (&a.source_file, a.source_line) {
        (Some(f), Some(l)) => format!("{f}:{l}: "),
        _ => String::new(),
    };
    let condition = a
        .condition
        .as_ref()
        .map(|c| format!("`{c}` failed: "))
        .unwrap_or_default();
    format!("{place}{condition}{}", a.message)
}

const CSV_HEADER: &str = "file,first_line,last_line,kind,pid,device_id,chip_id,die_id,stream_id,report_stream_id,task_id,task_pos,flip_num,kernel_name,func_name,node_name,program_id,hash,block_dim,tiling_key,ret_code,acl_code,inner_code,cann_codes,serial,core_id,error_code,errcode,error_str,decoded,kernel_asserts";

fn v<T: Display>(f: &Option<Fact<T>>) -> String {
    f.as_ref().map(|f| f.value.to_string()).unwrap_or_default()
}

pub fn csv(out: &mut impl Write, scan: &AicoreScan) -> io::Result<()> {
    csv_row(out, &CSV_HEADER.split(',').collect::<Vec<_>>())?;
    for fe in &scan.errors {
        let e = &fe.error;
        let core = e.cores.first();
        let fields = [
            fe.file.display().to_string(),
            e.first_line.to_string(),
            e.last_line.to_string(),
            kind_name(fe),
            e.pid.map(|p| p.to_string()).unwrap_or_default(),
            v(&e.device_id),
            v(&e.chip_id),
            v(&e.die_id),
            v(&e.stream_id),
            v(&e.report_stream_id),
            v(&e.task_id),
            v(&e.task_pos),
            v(&e.flip_num),
            v(&e.kernel_name),
            v(&e.func_name),
            v(&e.aic_info.node_name),
            v(&e.program_id),
            v(&e.hash),
            v(&e.block_dim),
            v(&e.tiling_key),
            v(&e.ret_code),
            v(&e.acl_code),
            v(&e.inner_code),
            e.cann_codes
                .iter()
                .map(|c| c.value.as_str())
                .collect::<Vec<_>>()
                .join(";"),
            core.map(|c| v(&c.serial)).unwrap_or_default(),
            core.map(|c| v(&c.core_id)).unwrap_or_default(),
            core.map(|c| v(&c.error_code)).unwrap_or_default(),
            core.and_then(|c| c.errcode.as_ref())
                .map(|f| f.value.join(";"))
                .unwrap_or_default(),
            core.map(|c| v(&c.error_str)).unwrap_or_default(),
            e.decoded.join("; "),
            {
                let mut asserts: Vec<String> = Vec::new();
                for a in &e.asserts {
                    let t = kernel_assert_text(&a.value);
                    if !asserts.contains(&t) {
                        asserts.push(t);
                    }
                }
                asserts.join("; ")
            },
        ];
        csv_row(out, &fields)?;
    }
    Ok(())
}
