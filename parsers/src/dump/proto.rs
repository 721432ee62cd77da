//! The protobuf header of a CANN operator dump (`package toolkit.dumpdata`, proto3).
//!
//! Field numbers follow `dump-data.md` §1.4.1, taken from the device-side writer's
//! `dump_data.proto` plus the extra fields of the exception-dump twin `toolkit.dump`
//! (`arg_index`). Enum-typed fields are kept as raw `i32` so an unknown data type or format
//! survives decoding and can be reported instead of guessed. prost skips unknown fields and
//! accepts both packed and unpacked encodings of `repeated uint64 dim`. Proto `string` fields are
//! declared as bytes (the same wire type) so that a name with invalid UTF-8 does not make the
//! whole header undecodable; [`super::header`] converts them lossily.

/// `DumpData`: one operator execution.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DumpData {
    #[prost(bytes = "vec", tag = "1")]
    pub version: Vec<u8>,
    /// Microseconds since the Unix epoch (device clock).
    #[prost(uint64, tag = "2")]
    pub dump_time: u64,
    #[prost(message, repeated, tag = "3")]
    pub output: Vec<OpOutput>,
    #[prost(message, repeated, tag = "4")]
    pub input: Vec<OpInput>,
    #[prost(message, repeated, tag = "5")]
    pub buffer: Vec<OpBuffer>,
    /// The unsanitised operator name (file names replace `.`, `/`, `\` and space by `_`).
    #[prost(bytes = "vec", tag = "6")]
    pub op_name: Vec<u8>,
    #[prost(message, repeated, tag = "7")]
    pub attr: Vec<OpAttr>,
    #[prost(message, repeated, tag = "8")]
    pub space: Vec<Workspace>,
    #[prost(bytes = "vec", tag = "9")]
    pub dfx_message: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OpOutput {
    #[prost(int32, tag = "1")]
    pub data_type: i32,
    #[prost(int32, tag = "2")]
    pub format: i32,
    #[prost(message, optional, tag = "3")]
    pub shape: Option<Shape>,
    #[prost(message, optional, tag = "4")]
    pub original_op: Option<OriginalOp>,
    #[prost(bytes = "vec", tag = "5")]
    pub data: Vec<u8>,
    #[prost(uint64, tag = "6")]
    pub size: u64,
    #[prost(message, optional, tag = "7")]
    pub original_shape: Option<Shape>,
    #[prost(int32, tag = "8")]
    pub sub_format: i32,
    #[prost(uint64, tag = "9")]
    pub address: u64,
    #[prost(message, repeated, tag = "10")]
    pub dim_range: Vec<DimRange>,
    #[prost(uint64, tag = "11")]
    pub offset: u64,
    #[prost(uint32, tag = "12")]
    pub arg_index: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OpInput {
    #[prost(int32, tag = "1")]
    pub data_type: i32,
    #[prost(int32, tag = "2")]
    pub format: i32,
    #[prost(message, optional, tag = "3")]
    pub shape: Option<Shape>,
    #[prost(bytes = "vec", tag = "4")]
    pub data: Vec<u8>,
    #[prost(uint64, tag = "5")]
    pub size: u64,
    #[prost(message, optional, tag = "6")]
    pub original_shape: Option<Shape>,
    #[prost(int32, tag = "7")]
    pub sub_format: i32,
    #[prost(uint64, tag = "8")]
    pub address: u64,
    #[prost(uint64, tag = "9")]
    pub offset: u64,
    #[prost(uint32, tag = "10")]
    pub arg_index: u32,
    /// `DfxTensorType` in exception dumps; 7 = tiling data.
    #[prost(uint32, tag = "11")]
    pub input_type: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OriginalOp {
    #[prost(bytes = "vec", tag = "1")]
    pub name: Vec<u8>,
    #[prost(uint32, tag = "2")]
    pub output_index: u32,
    #[prost(int32, tag = "3")]
    pub data_type: i32,
    #[prost(int32, tag = "4")]
    pub format: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Shape {
    #[prost(uint64, repeated, tag = "1")]
    pub dim: Vec<u64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct DimRange {
    #[prost(uint64, tag = "1")]
    pub dim_start: u64,
    #[prost(uint64, tag = "2")]
    pub dim_end: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OpBuffer {
    #[prost(int32, tag = "1")]
    pub buffer_type: i32,
    #[prost(bytes = "vec", tag = "2")]
    pub data: Vec<u8>,
    #[prost(uint64, tag = "3")]
    pub size: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OpAttr {
    #[prost(bytes = "vec", tag = "1")]
    pub name: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Workspace {
    #[prost(int32, tag = "1")]
    pub r#type: i32,
    #[prost(bytes = "vec", tag = "2")]
    pub data: Vec<u8>,
    #[prost(uint64, tag = "3")]
    pub size: u64,
    #[prost(uint32, tag = "4")]
    pub arg_index: u32,
}
