//! Framing and header decoding of binary operator dump files.
//!
//! Three framings exist (`dump-data.md` §1.1–1.3):
//!
//! ```text
//! v2  : u64 header_len | DumpData protobuf (header_len bytes) | inputs | outputs | buffers | workspaces
//! TLV : u64 head_len | u32 0x5A5A5A5A | u32 version | TLV(4) input descs | TLV(5) output descs | inputs | outputs
//! v1  : the whole file is one DumpData protobuf, tensor bytes inline in each `data` field
//! ```
//!
//! Detection: the `u32` at offset 8 equal to `0x5A5A5A5A` means TLV (a protobuf header cannot
//! start with byte 0x5A); otherwise v2 when the header length fits in the file, otherwise v1 when
//! the whole file decodes as a `DumpData` whose version is not "2.0".
//!
//! Data blocks are **not** read here: [`DumpHeader::blocks`] computes where each tensor's bytes
//! lie and how many of them the file really holds. Every length is checked against the file size
//! before use, with checked arithmetic, so a corrupt length cannot cause a huge allocation or an
//! overflow. Files shorter than their header claims are normal (zero-address tensors are skipped
//! by the writer) and show up as blocks with `available < size`.

use nom::number::complete::{le_i32, le_u32, le_u64};
use nom::Parser;
use prost::Message;
use serde::Serialize;

use super::dtype::DType;
use super::format::Format;
use super::proto;

/// The TLV magic, also the marker of the new Opdebug payload layout.
pub const TLV_MAGIC: u32 = 0x5A5A_5A5A;

/// Headers larger than this are refused as implausible (real headers are kilobytes).
pub const MAX_HEADER_LEN: u64 = 64 << 20;

/// How many leading bytes [`probe`] needs (fewer is fine for short files).
pub const PROBE_LEN: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Framing {
    V2,
    V1,
    Tlv,
}

impl std::fmt::Display for Framing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Framing::V2 => "v2",
            Framing::V1 => "v1",
            Framing::Tlv => "tlv",
        })
    }
}

/// What the first bytes of a file say about its framing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The header occupies bytes `8 .. 8 + header_len`.
    V2 { header_len: u64 },
    /// The TLV head (magic, version, descriptors) occupies bytes `8 .. 8 + head_len`.
    Tlv { head_len: u64 },
    /// The leading length does not fit: the file can only be a whole-file (v1) protobuf.
    V1Candidate { claimed_header_len: u64 },
}

/// Why a file is not a readable dump.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DumpError {
    #[error("file is {0} bytes, too short for a dump header (needs at least 9)")]
    TooShort(u64),
    #[error("header length {claimed} at offset 0 is larger than the file ({file_len} bytes), and the whole file is not a v1 protobuf dump either ({v1_reason})")]
    HeaderPastEnd {
        claimed: u64,
        file_len: u64,
        v1_reason: String,
    },
    #[error("header length {0} at offset 0 is implausibly large (limit {MAX_HEADER_LEN} bytes)")]
    HeaderTooLarge(u64),
    #[error("protobuf header at offset 8 does not decode: {0}")]
    BadProtobuf(String),
    #[error("TLV head at offset 8: {0}")]
    BadTlv(String),
}

/// Which list of the header a tensor came from. The derived `Ord` is an operator's tensor order:
/// inputs, then parameters (msprobe: inputs of the call too), then outputs, buffers and workspace
/// (a dump's data blocks follow its lists in that order).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Io {
    Input,
    /// A module's or API's parameter (weight, bias) in an msprobe dump: an input of the call.
    Parameter,
    Output,
    Buffer,
    Workspace,
}

impl std::fmt::Display for Io {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Io::Input => "input",
            Io::Output => "output",
            Io::Buffer => "buffer",
            Io::Workspace => "workspace",
            Io::Parameter => "parameter",
        })
    }
}

/// One tensor (or buffer / workspace) declared by a dump header.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TensorDesc {
    pub io: Io,
    /// Position within its list (0-based).
    pub index: usize,
    pub dtype: DType,
    pub format: Format,
    /// Device (storage) shape; the data is C-order over it.
    pub shape: Vec<u64>,
    /// Logical shape; empty when the writer did not set it.
    pub original_shape: Vec<u64>,
    /// Declared byte count of the data block.
    pub size: u64,
    /// Device address the tensor was read from or written to (`OpInput.address`,
    /// `OpOutput.address`, the TLV descriptors' `address`); `None` when absent or zero (headers
    /// written before 2022 have no such field; zero-address tensors are not dumped).
    pub address: Option<u64>,
    /// `DfxTensorType` of exception-dump inputs (7 = tiling data), when set.
    pub input_type: Option<u32>,
    /// Name of the original (pre-fusion) op an output maps to, when set.
    pub original_name: Option<String>,
    /// Which output of that original op this output stands for (set with `original_name`).
    pub original_output_index: Option<u32>,
}

/// `input_type` of the extra input that carries an exception dump's tiling data (`DfxTensorType`
/// TILING_DATA, `dump-data.md` §1.1): bytes for the kernel, not a tensor.
pub const TILING_DATA: u32 = 7;

impl TensorDesc {
    /// Whether the entry is an exception dump's tiling data ([`TILING_DATA`]).
    pub fn is_tiling_data(&self) -> bool {
        self.input_type == Some(TILING_DATA)
    }

    /// Whether the entry is tensor data: an input or output, not tiling data, with a data type
    /// or with bytes (an entry of undefined type and no bytes is an absent optional input; one
    /// with bytes is data whose type is unknown, to be reported, never dropped).
    pub fn is_tensor_data(&self) -> bool {
        matches!(self.io, Io::Input | Io::Output)
            && !self.is_tiling_data()
            && (self.dtype != DType::Undefined || self.size > 0)
    }
}

/// A decoded dump header: everything but the tensor bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DumpHeader {
    pub framing: Framing,
    pub version: String,
    /// Microseconds since the Unix epoch, device clock; `None` when absent or zero.
    pub dump_time: Option<u64>,
    /// The real (unsanitised) op name; `None` when absent.
    pub op_name: Option<String>,
    /// Inputs, outputs, buffers, workspaces — in data-block order.
    pub tensors: Vec<TensorDesc>,
    pub attrs: Vec<(String, String)>,
    pub dfx_message: Option<String>,
    /// File offset where the first data block starts.
    pub data_start: u64,
}

/// Where a tensor's bytes lie in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BlockSpan {
    pub offset: u64,
    /// Declared size.
    pub size: u64,
    /// Bytes actually present (`< size` for a truncated block).
    pub available: u64,
}

impl DumpHeader {
    /// Computes each tensor's data span for a file of `file_len` bytes. Blocks follow each other
    /// with no padding; a block that runs past the end is clipped, and blocks after it are empty.
    pub fn blocks(&self, file_len: u64) -> Vec<BlockSpan> {
        let mut offset = self.data_start;
        self.tensors
            .iter()
            .map(|t| {
                let start = offset.min(file_len);
                let available = t.size.min(file_len - start);
                let span = BlockSpan {
                    offset: start,
                    size: t.size,
                    available,
                };
                offset = offset.saturating_add(t.size);
                span
            })
            .collect()
    }

    /// Bytes past the last declared block (a writer bug or a non-dump file), if any.
    pub fn trailing_bytes(&self, file_len: u64) -> u64 {
        let total = self
            .tensors
            .iter()
            .fold(self.data_start, |acc, t| acc.saturating_add(t.size));
        file_len.saturating_sub(total)
    }
}

fn le_u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
}

fn le_u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
}

/// Decides the framing from the first [`PROBE_LEN`] bytes and the file length.
pub fn probe(prefix: &[u8], file_len: u64) -> Result<Probe, DumpError> {
    let Some(len) = le_u64_at(prefix, 0).filter(|_| file_len > 8) else {
        return Err(DumpError::TooShort(file_len));
    };
    if le_u32_at(prefix, 8) == Some(TLV_MAGIC) {
        if len > file_len - 8 {
            return Err(DumpError::BadTlv(format!(
                "head length {len} is larger than the file ({file_len} bytes)"
            )));
        }
        if len > MAX_HEADER_LEN {
            return Err(DumpError::HeaderTooLarge(len));
        }
        return Ok(Probe::Tlv { head_len: len });
    }
    if len <= file_len - 8 {
        if len > MAX_HEADER_LEN {
            return Err(DumpError::HeaderTooLarge(len));
        }
        return Ok(Probe::V2 { header_len: len });
    }
    Ok(Probe::V1Candidate {
        claimed_header_len: len,
    })
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn non_empty(b: &[u8]) -> Option<String> {
    (!b.is_empty()).then(|| lossy(b))
}

fn dims(s: &Option<proto::Shape>) -> Vec<u64> {
    s.as_ref().map(|s| s.dim.clone()).unwrap_or_default()
}

fn from_proto(d: proto::DumpData, framing: Framing, data_start: u64) -> DumpHeader {
    let mut tensors = Vec::with_capacity(d.input.len() + d.output.len());
    for (index, t) in d.input.iter().enumerate() {
        tensors.push(TensorDesc {
            io: Io::Input,
            index,
            dtype: DType::from_proto(t.data_type),
            format: Format::from_raw(t.format, t.sub_format),
            shape: dims(&t.shape),
            original_shape: dims(&t.original_shape),
            size: t.size,
            address: (t.address != 0).then_some(t.address),
            input_type: (t.input_type != 0).then_some(t.input_type),
            original_name: None,
            original_output_index: None,
        });
    }
    for (index, t) in d.output.iter().enumerate() {
        tensors.push(TensorDesc {
            io: Io::Output,
            index,
            dtype: DType::from_proto(t.data_type),
            format: Format::from_raw(t.format, t.sub_format),
            shape: dims(&t.shape),
            original_shape: dims(&t.original_shape),
            size: t.size,
            address: (t.address != 0).then_some(t.address),
            input_type: None,
            original_name: t.original_op.as_ref().and_then(|o| non_empty(&o.name)),
            original_output_index: t
                .original_op
                .as_ref()
                .filter(|o| !o.name.is_empty())
                .map(|o| o.output_index),
        });
    }
    for (index, b) in d.buffer.iter().enumerate() {
        tensors.push(opaque(Io::Buffer, index, b.size));
    }
    for (index, w) in d.space.iter().enumerate() {
        tensors.push(opaque(Io::Workspace, index, w.size));
    }
    DumpHeader {
        framing,
        version: lossy(&d.version),
        dump_time: (d.dump_time != 0).then_some(d.dump_time),
        op_name: non_empty(&d.op_name),
        tensors,
        attrs: d
            .attr
            .iter()
            .map(|a| (lossy(&a.name), lossy(&a.value)))
            .collect(),
        dfx_message: non_empty(&d.dfx_message),
        data_start,
    }
}

fn opaque(io: Io, index: usize, size: u64) -> TensorDesc {
    TensorDesc {
        io,
        index,
        dtype: DType::Uint8,
        format: Format::primary(Format::ND),
        shape: vec![size],
        original_shape: Vec::new(),
        size,
        address: None,
        input_type: None,
        original_name: None,
        original_output_index: None,
    }
}

/// Decodes the protobuf header of a v2 file (`header` = bytes `8 .. 8 + header_len`).
pub fn decode_v2(header: &[u8]) -> Result<DumpHeader, DumpError> {
    let d = proto::DumpData::decode(header).map_err(|e| DumpError::BadProtobuf(e.to_string()))?;
    Ok(from_proto(d, Framing::V2, 8 + header.len() as u64))
}

/// A v1 file decoded: its header and the inline bytes of each tensor, in header order.
#[derive(Clone, Debug, PartialEq)]
pub struct V1Dump {
    pub header: DumpHeader,
    pub data: Vec<Vec<u8>>,
}

/// Decodes a whole-file (v1) protobuf dump. `claimed_header_len` is what [`probe`] read, for the
/// error message when this is not a v1 file either.
pub fn decode_v1(file: &[u8], claimed_header_len: u64) -> Result<V1Dump, DumpError> {
    let past_end = |reason: String| DumpError::HeaderPastEnd {
        claimed: claimed_header_len,
        file_len: file.len() as u64,
        v1_reason: reason,
    };
    let d = proto::DumpData::decode(file).map_err(|e| past_end(e.to_string()))?;
    if d.version == b"2.0" {
        return Err(past_end("it decodes but says version 2.0".into()));
    }
    if d.input.is_empty() && d.output.is_empty() && d.op_name.is_empty() {
        return Err(past_end("it decodes to an empty message".into()));
    }
    let mut data: Vec<Vec<u8>> = d.input.iter().map(|t| t.data.clone()).collect();
    data.extend(d.output.iter().map(|t| t.data.clone()));
    data.extend(d.buffer.iter().map(|b| b.data.clone()));
    data.extend(d.space.iter().map(|w| w.data.clone()));
    let mut header = from_proto(d, Framing::V1, 0);
    // v1 writers may leave `size` unset: the inline bytes are authoritative.
    for (t, bytes) in header.tensors.iter_mut().zip(&data) {
        t.size = bytes.len() as u64;
    }
    Ok(V1Dump { header, data })
}

type TlvResult<'a, T> = nom::IResult<&'a [u8], T>;

/// Reads `{u32 tag, u32 len}` and returns the tag and the value bytes.
fn tlv(input: &[u8]) -> TlvResult<'_, (u32, &[u8])> {
    let (rest, (tag, len)) = (le_u32, le_u32).parse(input)?;
    let (rest, value) = nom::bytes::complete::take(len).parse(rest)?;
    Ok((rest, (tag, value)))
}

struct NestedInfo {
    shape: Vec<u64>,
    original_shape: Vec<u64>,
    original_name: Option<String>,
}

fn nested(mut input: &[u8]) -> Result<NestedInfo, String> {
    let mut info = NestedInfo {
        shape: Vec::new(),
        original_shape: Vec::new(),
        original_name: None,
    };
    while !input.is_empty() {
        let (rest, (tag, value)) =
            tlv(input).map_err(|_| format!("nested TLV cut short ({} bytes left)", input.len()))?;
        let dims = || {
            value
                .chunks_exact(8)
                .filter_map(|c| c.try_into().ok())
                .map(u64::from_le_bytes)
                .collect()
        };
        match tag {
            0 => info.shape = dims(),
            1 => info.original_shape = dims(),
            2 => info.original_name = non_empty(value.split(|&b| b == 0).next().unwrap_or(&[])),
            _ => {}
        }
        input = rest;
    }
    Ok(info)
}

fn tlv_descs(value: &[u8], io: Io) -> Result<Vec<TensorDesc>, String> {
    let (mut rest, count) =
        le_u32::<_, nom::error::Error<&[u8]>>(value).map_err(|_| format!("{io} count missing"))?;
    let prefix_len = if io == Io::Input { 40 } else { 52 };
    // Each descriptor needs at least its fixed prefix: refuse counts the bytes cannot hold.
    if u64::from(count) * prefix_len > rest.len() as u64 {
        return Err(format!(
            "{io} count {count} needs more bytes than the TLV holds ({})",
            rest.len()
        ));
    }
    let mut out = Vec::with_capacity(count as usize);
    for index in 0..count as usize {
        let parsed: TlvResult<'_, _> = if io == Io::Input {
            (le_i32, le_i32, le_i32, le_u64, le_u64, le_u64, le_u32)
                .map(|(dt, fmt, _addr_type, addr, _off, size, nlen)| {
                    (dt, fmt, -1, addr, size, nlen)
                })
                .parse(rest)
        } else {
            (
                (le_i32, le_i32, le_i32, le_i32, le_i32, le_i32),
                (le_u64, le_u64, le_u64, le_u32),
            )
                .map(|((dt, fmt, _addr_type, orig, ..), (addr, _, size, nlen))| {
                    (dt, fmt, orig, addr, size, nlen)
                })
                .parse(rest)
        };
        let (after, (dt, fmt, original_index, address, size, nested_len)) =
            parsed.map_err(|_| format!("{io} {index}: descriptor cut short"))?;
        let (after, nested_bytes) =
            nom::bytes::complete::take::<_, _, nom::error::Error<&[u8]>>(nested_len)
                .parse(after)
                .map_err(|_| {
                    format!("{io} {index}: nested length {nested_len} runs past the TLV")
                })?;
        let info = nested(nested_bytes).map_err(|e| format!("{io} {index}: {e}"))?;
        out.push(TensorDesc {
            io,
            index,
            dtype: DType::from_ge(dt),
            format: Format::from_raw(fmt, 0),
            shape: info.shape,
            original_shape: info.original_shape,
            size,
            address: (address != 0).then_some(address),
            input_type: None,
            original_output_index: info
                .original_name
                .as_ref()
                .and_then(|_| u32::try_from(original_index).ok()),
            original_name: info.original_name,
        });
        rest = after;
    }
    Ok(out)
}

/// Decodes the head of a TLV file (`head` = bytes `8 .. 8 + head_len`: magic, version, TLVs).
pub fn decode_tlv(head: &[u8]) -> Result<DumpHeader, DumpError> {
    let bad = DumpError::BadTlv;
    let (mut rest, (_magic, version)) =
        (le_u32, le_u32)
            .parse(head)
            .map_err(|_: nom::Err<nom::error::Error<&[u8]>>| {
                bad("magic and version cut short".into())
            })?;
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    while !rest.is_empty() {
        let (after, (tag, value)) = tlv(rest).map_err(|_| {
            bad(format!(
                "TLV at offset {} cut short",
                8 + head.len() - rest.len()
            ))
        })?;
        match tag {
            4 => inputs = tlv_descs(value, Io::Input).map_err(bad)?,
            5 => outputs = tlv_descs(value, Io::Output).map_err(bad)?,
            _ => {}
        }
        rest = after;
    }
    inputs.extend(outputs);
    Ok(DumpHeader {
        framing: Framing::Tlv,
        version: version.to_string(),
        dump_time: None,
        op_name: None,
        tensors: inputs,
        attrs: Vec::new(),
        dfx_message: None,
        data_start: 8 + head.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_detects_framings() {
        let mut tlv = 40u64.to_le_bytes().to_vec();
        tlv.extend(TLV_MAGIC.to_le_bytes());
        tlv.extend([0; 4]);
        assert_eq!(probe(&tlv, 100), Ok(Probe::Tlv { head_len: 40 }));
        let v2 = 10u64.to_le_bytes();
        assert_eq!(probe(&v2, 100), Ok(Probe::V2 { header_len: 10 }));
        assert_eq!(probe(&v2, 18), Ok(Probe::V2 { header_len: 10 }));
        assert_eq!(
            probe(&v2, 17),
            Ok(Probe::V1Candidate {
                claimed_header_len: 10
            })
        );
        assert_eq!(probe(&v2, 8), Err(DumpError::TooShort(8)));
        assert_eq!(probe(&[1, 2], 2), Err(DumpError::TooShort(2)));
        let huge = (MAX_HEADER_LEN + 1).to_le_bytes();
        assert_eq!(
            probe(&huge, u64::MAX),
            Err(DumpError::HeaderTooLarge(MAX_HEADER_LEN + 1))
        );
    }

    #[test]
    fn blocks_clip_at_end_of_file() {
        let mk = |size| opaque(Io::Input, 0, size);
        let h = DumpHeader {
            framing: Framing::V2,
            version: "2.0".into(),
            dump_time: None,
            op_name: None,
            tensors: vec![mk(10), mk(u64::MAX), mk(5)],
            attrs: vec![],
            dfx_message: None,
            data_start: 20,
        };
        let b = h.blocks(35);
        assert_eq!(
            b[0],
            BlockSpan {
                offset: 20,
                size: 10,
                available: 10
            }
        );
        assert_eq!(
            b[1],
            BlockSpan {
                offset: 30,
                size: u64::MAX,
                available: 5
            }
        );
        assert_eq!(
            b[2],
            BlockSpan {
                offset: 35,
                size: 5,
                available: 0
            }
        );
        assert_eq!(h.trailing_bytes(35), 0);
    }

    #[test]
    fn addresses_are_read_and_zero_is_absent() {
        let d = proto::DumpData {
            version: b"2.0".to_vec(),
            input: vec![
                proto::OpInput {
                    size: 4,
                    address: 0x12c0_0000_0040,
                    ..Default::default()
                },
                proto::OpInput {
                    size: 4,
                    ..Default::default()
                },
            ],
            output: vec![proto::OpOutput {
                size: 8,
                address: 0x20,
                ..Default::default()
            }],
            ..Default::default()
        };
        let h = decode_v2(&d.encode_to_vec()).expect("decodes");
        let got: Vec<(Io, Option<u64>)> = h.tensors.iter().map(|t| (t.io, t.address)).collect();
        assert_eq!(
            got,
            [
                (Io::Input, Some(0x12c0_0000_0040)),
                (Io::Input, None),
                (Io::Output, Some(0x20))
            ]
        );
    }

    #[test]
    fn tlv_rejects_absurd_counts() {
        let mut head = TLV_MAGIC.to_le_bytes().to_vec();
        head.extend(0u32.to_le_bytes());
        head.extend(4u32.to_le_bytes());
        head.extend(4u32.to_le_bytes());
        head.extend(u32::MAX.to_le_bytes());
        let err = decode_tlv(&head).unwrap_err();
        assert!(err.to_string().contains("count 4294967295"), "{err}");
    }

    #[test]
    fn decoders_never_panic_on_garbage() {
        let mut seed = 0x1234_5678u32;
        for len in 0..300 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (seed >> 24) as u8
                })
                .collect();
            let _ = decode_v2(&bytes);
            let _ = decode_tlv(&bytes);
            let _ = decode_v1(&bytes, 0);
            let _ = probe(&bytes, len as u64);
        }
    }
}
