//! `Opdebug.Node_OpDebug.*` overflow payloads (`dump-data.md` §3.4).
//!
//! The file is a normal dump whose single output is a 2048-byte `DT_UINT8` block, in one of two
//! layouts (all values little-endian):
//!
//! ```text
//! old (first u32 != 0x5A5A5A5A, exactly 2048 bytes):
//!   0    DHA Atomic Add info   u64 model_id, stream_id, task_id, task_type, pc_start, para_base
//!   128  L2 Atomic Add info    (same)
//!   256  AI Core info          (same)
//!   512  DHA status   u64 | 768 L2 status u64 | 1024 AI Core u64 kernel_code, block_idx, status
//! new:
//!   u32 magic=0x5A5A5A5A, u32 version, u32 valid, u32 acc_type (0 AIC, 1 AIV, 2 AICPU, 3 SDMA),
//!   u32 rsv, u32 data_len, then data_len bytes of u64 records:
//!   AIC/AIV: model_id, stream_id, task_id, task_type, context_id, thread_id, pc_start, para_base,
//!            core_id, block_id, status (version 1: status is 4 × u64)
//!   SDMA:    model_id, stream_id, task_id, task_type, context_id, thread_id, src, dst, channel, status
//!   AICPU:   model_id, stream_id, task_id, task_type, context_id, cpu_id, thread_id, status
//! ```
//!
//! A non-zero status means that unit overflowed.

use serde::Serialize;

use super::header::TLV_MAGIC;

/// Size of the payload GE registers for the overflow-debug task.
pub const PAYLOAD_LEN: usize = 2048;

/// One unit's overflow record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OverflowUnit {
    /// `AI Core`, `DHA Atomic Add`, `L2 Atomic Add` (old layout) or `AIC`, `AIV`, `AICPU`, `SDMA`.
    pub unit: &'static str,
    pub model_id: u64,
    pub stream_id: u64,
    pub task_id: u64,
    pub task_type: u64,
    /// FFTS+ context and thread; 65535 means "not a sub-task". Absent in the old layout.
    pub context_id: Option<u64>,
    pub thread_id: Option<u64>,
    /// Non-zero when the unit overflowed (the OR of the four words in version-1 records).
    pub status: u64,
}

/// A decoded payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Opdebug {
    /// `old` or `new`.
    pub layout: &'static str,
    pub version: Option<u32>,
    pub units: Vec<OverflowUnit>,
}

impl Opdebug {
    /// Units whose status reports an overflow.
    pub fn overflowed(&self) -> impl Iterator<Item = &OverflowUnit> {
        self.units.iter().filter(|u| u.status != 0)
    }
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8)?.try_into().ok().map(u64::from_le_bytes)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)?.try_into().ok().map(u32::from_le_bytes)
}

fn old(b: &[u8]) -> Result<Opdebug, String> {
    if b.len() != PAYLOAD_LEN {
        return Err(format!(
            "old-layout Opdebug payload is {} bytes, expected {PAYLOAD_LEN}",
            b.len()
        ));
    }
    let unit = |name, info: usize, status: usize| -> Option<OverflowUnit> {
        Some(OverflowUnit {
            unit: name,
            model_id: u64_at(b, info)?,
            stream_id: u64_at(b, info + 8)?,
            task_id: u64_at(b, info + 16)?,
            task_type: u64_at(b, info + 24)?,
            context_id: None,
            thread_id: None,
            status: u64_at(b, status)?,
        })
    };
    let units = [
        unit("DHA Atomic Add", 0, 512),
        unit("L2 Atomic Add", 128, 768),
        unit("AI Core", 256, 1024 + 16),
    ];
    Ok(Opdebug {
        layout: "old",
        version: None,
        units: units.into_iter().flatten().collect(),
    })
}

fn new(b: &[u8]) -> Result<Opdebug, String> {
    let field = |at| u32_at(b, at).ok_or_else(|| format!("new-layout header cut at byte {at}"));
    let version = field(4)?;
    let acc_type = field(12)?;
    let data_len = field(20)? as usize;
    let data = b
        .get(24..24usize.saturating_add(data_len))
        .ok_or_else(|| format!("data_len {data_len} runs past the {}-byte payload", b.len()))?;
    let (unit, words): (&'static str, usize) = match (acc_type, version) {
        (0, 1) => ("AIC", 14),
        (1, 1) => ("AIV", 14),
        (0, _) => ("AIC", 11),
        (1, _) => ("AIV", 11),
        (2, _) => ("AICPU", 8),
        (3, _) => ("SDMA", 10),
        (t, _) => return Err(format!("unknown acc_type {t}")),
    };
    let record = words * 8;
    if data.len() % record != 0 {
        return Err(format!(
            "data_len {data_len} is not a multiple of the {record}-byte {unit} record"
        ));
    }
    let units = data
        .chunks_exact(record)
        .map(|r| {
            let w = |i: usize| u64_at(r, i * 8).unwrap_or(0);
            let (context_id, thread_id, status) = match unit {
                "AICPU" => (w(4), w(6), w(7)),
                "SDMA" => (w(4), w(5), w(9)),
                _ if words == 14 => (w(4), w(5), w(10) | w(11) | w(12) | w(13)),
                _ => (w(4), w(5), w(10)),
            };
            OverflowUnit {
                unit,
                model_id: w(0),
                stream_id: w(1),
                task_id: w(2),
                task_type: w(3),
                context_id: Some(context_id),
                thread_id: Some(thread_id),
                status,
            }
        })
        .collect();
    Ok(Opdebug {
        layout: "new",
        version: Some(version),
        units,
    })
}

/// Decodes an Opdebug payload, choosing the layout by the leading magic.
pub fn parse(payload: &[u8]) -> Result<Opdebug, String> {
    if u32_at(payload, 0) == Some(TLV_MAGIC) {
        new(payload)
    } else {
        old(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(b: &mut [u8], at: usize, v: u64) {
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    #[test]
    fn old_layout() {
        let mut b = vec![0u8; PAYLOAD_LEN];
        put(&mut b, 256, 1);
        put(&mut b, 256 + 8, 2);
        put(&mut b, 256 + 16, 5);
        put(&mut b, 1024 + 16, 0x10);
        let d = parse(&b).unwrap();
        assert_eq!(d.layout, "old");
        let hit: Vec<_> = d.overflowed().collect();
        assert_eq!(hit.len(), 1);
        assert_eq!(
            (hit[0].unit, hit[0].stream_id, hit[0].task_id, hit[0].status),
            ("AI Core", 2, 5, 0x10)
        );
        assert!(parse(&b[..100]).is_err());
    }

    #[test]
    fn new_layout_aiv_record() {
        let mut b = vec![0u8; PAYLOAD_LEN];
        b[0..4].copy_from_slice(&TLV_MAGIC.to_le_bytes());
        b[8..12].copy_from_slice(&1u32.to_le_bytes());
        b[12..16].copy_from_slice(&1u32.to_le_bytes());
        b[20..24].copy_from_slice(&88u32.to_le_bytes());
        put(&mut b, 24 + 8, 3);
        put(&mut b, 24 + 16, 9);
        put(&mut b, 24 + 32, 65535);
        put(&mut b, 24 + 80, 1);
        let d = parse(&b).unwrap();
        assert_eq!((d.layout, d.version), ("new", Some(0)));
        let u = &d.units[0];
        assert_eq!(
            (u.unit, u.stream_id, u.task_id, u.context_id, u.status),
            ("AIV", 3, 9, Some(65535), 1)
        );
        b[20..24].copy_from_slice(&5000u32.to_le_bytes());
        assert!(parse(&b).is_err());
        b[20..24].copy_from_slice(&87u32.to_le_bytes());
        assert!(parse(&b).is_err());
    }
}
