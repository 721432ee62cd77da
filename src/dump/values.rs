//! Tensor values in order: the one tensor value reader of npgx.
//!
//! [`ValueReader`] gives the elements of a [`TensorSlot`] (from the lister, [`super::list`])
//! chunk by chunk, in logical C order ([`ValueReader::open`]) or, for a pair, in an order both
//! sides share ([`ValueReader::pair`]: the metrics of a pair do not depend on the order of its
//! elements):
//!
//! * plain (ND) data is streamed from the file in fixed-size chunks: memory stays flat whatever
//!   the tensor size;
//! * padded device formats (NC1HWC0, NDC1HWC0, FRACTAL_Z, FRACTAL_Z_3D, FRACTAL_NZ, C1HWNCoC0):
//!   a pair in the same layout on both sides is streamed row by row in device order, padding
//!   dropped (flat memory); against a plain tensor, the plain side is read whole, laid out in the
//!   device layout of the other with [`PaddedView::scatter`] and streamed the same way (one
//!   device-sized copy, as big as the other side's block); otherwise the device block is read
//!   whole and brought back to the logical shape with [`PaddedView::gather`] (device bytes plus
//!   one logical copy);
//! * strided views (a transposed or expanded `.pt` tensor): the storage is read whole and put in
//!   logical order one chunk at a time ([`layout::strided_range`]);
//! * v1 whole-file protobufs (old and small) are decoded again when their values are read.
//!
//! [`raw_tensor`] gives the decoded bytes of a tensor in logical order in its own element type,
//! for writers of `.npy` files (`dump-convert`, `repro`).

use std::fs::File;
use std::path::Path;

use npgx_parsers::dump::dtype::Element;
use npgx_parsers::dump::layout::{self, PaddedView};
use npgx_parsers::dump::scalar;

use super::blocks::{Blocks, ReadError};
use super::list::{decode_header, is_real, read_exact, Data, InlineData, TensorSlot};
use super::mapped::Mode;

/// Elements decoded per chunk.
pub const CHUNK: usize = 1 << 16;

/// Decodes the whole elements of `el` in `bytes` to `f64` into `out`, as many as fit; returns
/// how many. Inlined (no call into a generic `Vec` method), so it is compiled into the vectorised
/// metric loop of `dump-compare` ([`crate::simd`]).
#[inline(always)]
pub fn decode_to(el: Element, bytes: &[u8], out: &mut [f64]) -> usize {
    #[inline(always)]
    fn each<const N: usize>(bytes: &[u8], out: &mut [f64], f: impl Fn([u8; N]) -> f64) -> usize {
        let mut n = 0;
        for (dst, c) in out.iter_mut().zip(bytes.chunks_exact(N)) {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            *dst = f(a);
            n += 1;
        }
        n
    }
    match el {
        Element::F16 => each::<2>(bytes, out, |b| {
            f64::from(scalar::f16_to_f32(u16::from_le_bytes(b)))
        }),
        Element::Bf16 => each::<2>(bytes, out, |b| {
            f64::from(scalar::bf16_to_f32(u16::from_le_bytes(b)))
        }),
        Element::F32 => each::<4>(bytes, out, |b| f64::from(f32::from_le_bytes(b))),
        Element::F64 => each::<8>(bytes, out, f64::from_le_bytes),
        Element::F8E4m3fn => each::<1>(bytes, out, |[b]| f64::from(scalar::e4m3fn_to_f32(b))),
        Element::F8E5m2 => each::<1>(bytes, out, |[b]| f64::from(scalar::e5m2_to_f32(b))),
        Element::I8 => each::<1>(bytes, out, |[b]| f64::from(b as i8)),
        Element::U8 => each::<1>(bytes, out, |[b]| f64::from(b)),
        Element::Bool => each::<1>(bytes, out, |[b]| f64::from(u8::from(b != 0))),
        Element::I16 => each::<2>(bytes, out, |b| f64::from(i16::from_le_bytes(b))),
        Element::U16 => each::<2>(bytes, out, |b| f64::from(u16::from_le_bytes(b))),
        Element::I32 => each::<4>(bytes, out, |b| f64::from(i32::from_le_bytes(b))),
        Element::U32 => each::<4>(bytes, out, |b| f64::from(u32::from_le_bytes(b))),
        Element::I64 => each::<8>(bytes, out, |b| i64::from_le_bytes(b) as f64),
        Element::U64 => each::<8>(bytes, out, |b| u64::from_le_bytes(b) as f64),
        // Not real-valued or not byte-aligned: never listed (see `is_real`).
        Element::I4 | Element::C64 | Element::C128 => 0,
    }
}

/// [`decode_to`] with AVX2 vectors for fp16 (F16C), bf16 and fp32, the bulk of real dumps —
/// exact, as the portable decoders: the same `f64` values, NaN payloads aside for fp16 — asking
/// for the bytes a page ahead ([`crate::simd::AHEAD`]: a mapping's pages are read straight from
/// the page cache); other types as [`decode_to`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn decode_to_x86(
    f: crate::simd::x86::Features,
    el: Element,
    bytes: &[u8],
    out: &mut [f64],
) -> usize {
    use std::arch::x86_64::*;
    /// Eight values at a time, `load` turning `8·size` bytes into eight f32 (one loop per type,
    /// so no branch on the type per step), the values past the last eight by [`decode_to`].
    #[inline(always)]
    fn eights(
        f: crate::simd::x86::Features,
        (el, size): (Element, usize),
        bytes: &[u8],
        out: &mut [f64],
        load: impl Fn(*const u8) -> __m256,
    ) -> usize {
        let n = out.len().min(bytes.len() / size);
        let whole = n / 8 * 8;
        // SAFETY: the `Features` token proves the CPU has F16C and AVX2; each step reads
        // `8·size` bytes at `size·i` with `i + 8 <= n <= bytes.len() / size` (what `load` is
        // given) and writes 8 values at `i`, `i + 8 <= n <= out.len()`.
        unsafe {
            for i in (0..whole).step_by(8) {
                // A line ahead per 64 bytes read.
                if (size * i) % 64 == 0 {
                    f.prefetch(bytes, size * i);
                }
                let x = load(bytes.as_ptr().add(size * i));
                let o = out.as_mut_ptr().add(i);
                _mm256_storeu_pd(o, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
                _mm256_storeu_pd(o.add(4), _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x)));
            }
        }
        whole + decode_to(el, &bytes[size * whole..size * n], &mut out[whole..n])
    }
    // SAFETY (of each `load`): it reads the `8·size` bytes at `p` that `eights` hands it; x86-64
    // is little-endian, as the dump's bytes.
    match el {
        Element::F16 => eights(f, (el, 2), bytes, out, |p| unsafe {
            _mm256_cvtph_ps(_mm_loadu_si128(p.cast()))
        }),
        Element::Bf16 => eights(f, (el, 2), bytes, out, |p| unsafe {
            _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(
                _mm_loadu_si128(p.cast()),
            )))
        }),
        Element::F32 => eights(f, (el, 4), bytes, out, |p| unsafe {
            _mm256_loadu_ps(p.cast())
        }),
        _ => decode_to(el, bytes, out),
    }
}

/// [`decode_to_x86`] sixteen values at a time with AVX-512 vectors (fp16, bf16, fp32; the
/// values past the last sixteen and other types by [`decode_to_x86`]): the same `f64` values.
#[cfg(all(target_arch = "x86_64", npgx_avx512))]
#[clippy::msrv = "1.89"]
#[inline(always)]
pub fn decode_to_x86_512(
    f: crate::simd::x86::avx512::Features,
    el: Element,
    bytes: &[u8],
    out: &mut [f64],
) -> usize {
    use std::arch::x86_64::*;
    /// Sixteen values at a time, `load` turning `16·size` bytes into sixteen f32.
    #[inline(always)]
    fn sixteens(
        f: crate::simd::x86::avx512::Features,
        (el, size): (Element, usize),
        bytes: &[u8],
        out: &mut [f64],
        load: impl Fn(*const u8) -> __m512,
    ) -> usize {
        let n = out.len().min(bytes.len() / size);
        let whole = n / 16 * 16;
        // SAFETY: the `Features` token proves the CPU has AVX-512F (and F16C, AVX2); each step
        // reads `16·size` bytes at `size·i` with `i + 16 <= n <= bytes.len() / size` (what
        // `load` is given) and writes 16 values at `i`, `i + 16 <= n <= out.len()`.
        unsafe {
            for i in (0..whole).step_by(16) {
                // A line ahead per 64 bytes read.
                if (size * i) % 64 == 0 {
                    f.avx2().prefetch(bytes, size * i);
                }
                let x = load(bytes.as_ptr().add(size * i));
                let high = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(x)));
                let o = out.as_mut_ptr().add(i);
                _mm512_storeu_pd(o, _mm512_cvtps_pd(_mm512_castps512_ps256(x)));
                _mm512_storeu_pd(o.add(8), _mm512_cvtps_pd(high));
            }
        }
        whole
            + decode_to_x86(
                f.avx2(),
                el,
                &bytes[size * whole..size * n],
                &mut out[whole..n],
            )
    }
    // SAFETY (of each `load`): it reads the `16·size` bytes at `p` that `sixteens` hands it;
    // x86-64 is little-endian, as the dump's bytes.
    match el {
        Element::F16 => sixteens(f, (el, 2), bytes, out, |p| unsafe {
            _mm512_cvtph_ps(_mm256_loadu_si256(p.cast()))
        }),
        Element::Bf16 => sixteens(f, (el, 2), bytes, out, |p| unsafe {
            _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(
                _mm256_loadu_si256(p.cast()),
            )))
        }),
        Element::F32 => sixteens(f, (el, 4), bytes, out, |p| unsafe {
            _mm512_loadu_ps(p.cast())
        }),
        _ => decode_to_x86(f.avx2(), el, bytes, out),
    }
}

/// The bytes of a tensor in logical C order, in its own element type, read whole. For `.npy`
/// writers; comparisons use [`ValueReader`], which streams.
pub fn raw_tensor(path: &Path, slot: &TensorSlot) -> Result<Vec<u8>, String> {
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let es = slot.element.size().unwrap_or(1);
    match &slot.data {
        Data::Plain { offset, len } => read_exact(&file, *offset, *len),
        Data::Padded { offset, len, view } => {
            let device = read_exact(&file, *offset, *len)?;
            view.gather(&device, es)
                .ok_or_else(|| "device block is shorter than its layout".to_string())
        }
        Data::Strided {
            offset,
            len,
            stride,
        } => {
            let storage = read_exact(&file, *offset, *len)?;
            layout::gather_strided(&storage, &slot.shape, stride, es)
                .ok_or_else(|| "strided view runs past its storage".to_string())
        }
        Data::Statistics(_) => Err("statistics only: the dump holds no values".to_string()),
        Data::V1 { block, view } => {
            let len = file
                .metadata()
                .map_err(|e| format!("cannot stat: {e}"))?
                .len();
            let (_, inline) = decode_header(&file, len).map_err(|e| e.message)?;
            let bytes = inline
                .and_then(|mut d| (*block < d.len()).then(|| d.swap_remove(*block)))
                .ok_or_else(|| "v1 data block missing".to_string())?;
            match view {
                Some(v) => v
                    .gather(&bytes, es)
                    .ok_or_else(|| "device block is shorter than its layout".to_string()),
                None => Ok(bytes),
            }
        }
    }
}

/// The bytes of a slot's block as the file holds them (device layout, storage order), read
/// whole from `file` (or from `inline`, the data of a v1 file). For writers that keep the
/// device layout beside the logical one (repro).
pub fn device_block(
    file: &File,
    inline: Option<&InlineData>,
    slot: &TensorSlot,
) -> Result<Vec<u8>, String> {
    match &slot.data {
        Data::Plain { offset, len }
        | Data::Padded { offset, len, .. }
        | Data::Strided { offset, len, .. } => read_exact(file, *offset, *len),
        Data::V1 { block, .. } => inline
            .and_then(|d| d.get(*block))
            .cloned()
            .ok_or_else(|| "v1 data block missing".to_string()),
        Data::Statistics(_) => Err("statistics only: the dump holds no values".to_string()),
    }
}

/// Where a reader's elements come from: streamed from the file, or held in memory.
enum Source {
    /// Plain data streamed from the file.
    File {
        blocks: Blocks,
        pos: u64,
        end: u64,
    },
    /// A padded device layout streamed from the file row by row in device order, the padding
    /// of each row dropped.
    Rows {
        blocks: Blocks,
        offset: u64,
        view: PaddedView,
        row: u64,
    },
    Held(Held),
}

/// Elements held in memory.
enum Held {
    /// Elements in order, held whole.
    Memory { bytes: Vec<u8>, pos: usize },
    /// Logical elements laid out in `view`, the other side's device layout (padding zero), read
    /// row by row as [`Source::Rows`] reads a file.
    Picked {
        device: Vec<u8>,
        view: PaddedView,
        row: u64,
    },
    /// A strided view's storage held whole, put in logical order a chunk at a time.
    Strided {
        storage: Vec<u8>,
        shape: Vec<u64>,
        stride: Vec<u64>,
        pos: u64,
        end: u64,
    },
}

/// Streams a tensor's elements as raw bytes, [`CHUNK`] elements at a time, in logical C order or
/// in the order [`ValueReader::pair`] chose for both sides of a pair.
pub struct ValueReader {
    source: Source,
    element: Element,
    size: usize,
    buf: Vec<u8>,
    /// Device rows as read, before their padding is dropped ([`Source::Rows`]).
    rows: Vec<u8>,
}

impl ValueReader {
    /// Opens the tensor `slot` of the file at `path`, its elements in logical C order (mapped
    /// as `map` says).
    pub fn open(path: &Path, slot: &TensorSlot, map: Mode) -> Result<ValueReader, String> {
        let size = real_size(slot)?;
        let source = match &slot.data {
            Data::Plain { offset, len } => {
                let blocks = open_blocks(path, map)?;
                blocks.will_read(*offset, *len);
                Source::File {
                    blocks,
                    pos: *offset,
                    end: offset.saturating_add(*len / size as u64 * size as u64),
                }
            }
            Data::Strided {
                offset,
                len,
                stride,
            } => {
                let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
                Source::Held(Held::Strided {
                    storage: read_exact(&file, *offset, *len)?,
                    shape: slot.shape.clone(),
                    stride: stride.clone(),
                    pos: 0,
                    end: slot.elements(),
                })
            }
            Data::Padded { .. } | Data::V1 { .. } | Data::Statistics(_) => {
                Source::Held(Held::Memory {
                    bytes: raw_tensor(path, slot)?,
                    pos: 0,
                })
            }
        };
        Ok(ValueReader::with(source, slot.element, size))
    }

    /// Opens both tensors of a pair (same number of elements, checked by the caller) so that
    /// they give their elements in the same order, the cheapest there is: device order when
    /// either is in a padded device format and the other in the same layout or plain, logical
    /// order otherwise (see the module's comment for what each holds in memory).
    pub fn pair(
        golden: (&Path, &TensorSlot),
        target: (&Path, &TensorSlot),
        map: Mode,
    ) -> Result<(ValueReader, ValueReader), String> {
        let open = |(path, slot): (&Path, &TensorSlot), order: Option<&PaddedView>| {
            let size = real_size(slot)?;
            let source = match (&slot.data, order) {
                (Data::Padded { offset, view, len }, Some(order)) if view == order => {
                    let blocks = open_blocks(path, map)?;
                    blocks.will_read(*offset, *len);
                    Source::Rows {
                        blocks,
                        offset: *offset,
                        view: view.clone(),
                        row: 0,
                    }
                }
                (Data::Plain { .. }, Some(order)) => {
                    let bytes = raw_tensor(path, slot)?;
                    if (bytes.len() / size) as u64 != order.logical_elements {
                        return Err(format!(
                            "{} elements where the other side has {}",
                            bytes.len() / size,
                            order.logical_elements
                        ));
                    }
                    let device = order
                        .scatter(&bytes, size)
                        .ok_or("cannot lay the elements out in the other side's device layout")?;
                    Source::Held(Held::Picked {
                        device,
                        view: order.clone(),
                        row: 0,
                    })
                }
                _ => return ValueReader::open(path, slot, map),
            };
            Ok(ValueReader::with(source, slot.element, size))
        };
        let order = device_order(golden.1, target.1);
        let g = open(golden, order).map_err(|e| format!("golden: {e}"))?;
        let t = open(target, order).map_err(|e| format!("target: {e}"))?;
        Ok((g, t))
    }

    /// Whether [`ValueReader::pair`] streams both tensors of a pair (both plain, or both in one
    /// padded device layout): the pair then holds no whole tensor in memory, whatever its size.
    pub fn streams(golden: &TensorSlot, target: &TensorSlot) -> bool {
        let plain = |slot: &TensorSlot| matches!(slot.data, Data::Plain { .. });
        match device_order(golden, target) {
            // Device order with a plain side: that side is read whole to be laid out.
            Some(_) => !plain(golden) && !plain(target),
            None => plain(golden) && plain(target),
        }
    }

    fn with(source: Source, element: Element, size: usize) -> ValueReader {
        ValueReader {
            source,
            element,
            size,
            buf: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Calls `f` with the next at most `max` elements (at least one) as raw little-endian bytes
    /// of the tensor's own type (empty at the end), and gives back its result. The bytes may be
    /// the file's own pages (a mapped file, under the SIGBUS guard), so they exist only for the
    /// call; a file that lost bytes while it was read is an error, whatever `f` computed.
    pub fn next_with<R>(
        &mut self,
        max: usize,
        f: impl for<'a> FnOnce(&'a [u8]) -> R,
    ) -> Result<R, String> {
        let es = self.size;
        let max = max.max(1);
        match &mut self.source {
            Source::File { blocks, pos, end } => {
                let want = (*end - *pos).min((max * es) as u64);
                let r = blocks
                    .with_range(*pos, want, &mut self.buf, f)
                    .map_err(|e| e.to_string())?;
                *pos += want;
                Ok(r)
            }
            Source::Rows {
                blocks,
                offset,
                view,
                row,
            } => {
                let row_bytes = row_bytes(view, es)?;
                self.buf.clear();
                // Rows of padding only give nothing: read on until some element or the end.
                while self.buf.is_empty() && *row < view.rows {
                    let n = rows_per_chunk(view, max).min(view.rows - *row);
                    let at = *offset + *row * row_bytes as u64;
                    let first = *row;
                    let buf = &mut self.buf;
                    blocks
                        .with_range(at, n * row_bytes as u64, &mut self.rows, |rows| {
                            real_prefixes(view, first, rows, row_bytes, buf)
                        })
                        .map_err(|e| e.to_string())?;
                    *row += n;
                }
                Ok(f(&self.buf))
            }
            Source::Held(held) => Ok(f(next_held(held, &mut self.buf, es, max)?)),
        }
    }

    /// Whether the files read still hold every byte they had when they were opened: a file
    /// truncated after its last read is reported as changed too.
    pub fn finish(&self) -> Result<(), String> {
        match &self.source {
            Source::File { blocks, .. } | Source::Rows { blocks, .. } if !blocks.still_whole() => {
                Err(ReadError::Changed { offset: 0 }.to_string())
            }
            _ => Ok(()),
        }
    }

    /// The tensor's element type.
    pub fn element(&self) -> Element {
        self.element
    }
}

/// The next at most `max` elements (of `es` bytes) of elements held in memory; `buf` holds them
/// when they are not contiguous there.
fn next_held<'a>(
    held: &'a mut Held,
    buf: &'a mut Vec<u8>,
    es: usize,
    max: usize,
) -> Result<&'a [u8], String> {
    match held {
        Held::Memory { bytes, pos } => {
            let want = (bytes.len() - *pos).min(max * es) / es * es;
            let start = *pos;
            *pos += want;
            Ok(&bytes[start..start + want])
        }
        Held::Picked { device, view, row } => {
            // The same rows per call as the other side's `Rows`.
            let row_bytes = row_bytes(view, es)?;
            buf.clear();
            while buf.is_empty() && *row < view.rows {
                let n = rows_per_chunk(view, max).min(view.rows - *row);
                let rows = usize::try_from(*row)
                    .ok()
                    .and_then(|r| r.checked_mul(row_bytes))
                    .and_then(|at| {
                        let len = usize::try_from(n).ok()?.checked_mul(row_bytes)?;
                        device.get(at..at.checked_add(len)?)
                    })
                    .ok_or("device rows run past the laid-out elements")?;
                real_prefixes(view, *row, rows, row_bytes, buf);
                *row += n;
            }
            Ok(buf)
        }
        Held::Strided {
            storage,
            shape,
            stride,
            pos,
            end,
        } => {
            let n = (*end - *pos).min(max as u64);
            buf.clear();
            layout::strided_range(storage, shape, stride, es, *pos, n, buf)
                .ok_or("strided view runs past its storage")?;
            *pos += n;
            Ok(buf)
        }
    }
}

/// Bytes of one device row of `view`.
fn row_bytes(view: &PaddedView, es: usize) -> Result<usize, String> {
    usize::try_from(view.row_len)
        .ok()
        .and_then(|r| r.checked_mul(es))
        .filter(|&b| b > 0)
        .ok_or_else(|| "device rows do not fit in memory".to_string())
}

/// Appends to `buf` the real elements (the prefix [`PaddedView::real_in_row`] names) of each
/// `row_bytes`-byte device row in `rows`, the first of them being row `first`.
fn real_prefixes(view: &PaddedView, first: u64, rows: &[u8], row_bytes: usize, buf: &mut Vec<u8>) {
    let es = row_bytes / view.row_len.max(1) as usize;
    for (r, bytes) in (first..).zip(rows.chunks_exact(row_bytes)) {
        let real = (view.real_in_row(r) as usize).min(view.row_len as usize);
        buf.extend_from_slice(&bytes[..real * es]);
    }
}

/// Device rows per call of [`ValueReader::next_with`] for at most `max` elements (at least one
/// row): a function of the layout alone, so both sides of a pair in device order give the same
/// elements per call.
fn rows_per_chunk(view: &PaddedView, max: usize) -> u64 {
    (max as u64 / view.row_len.max(1)).max(1)
}

/// The device layout a pair is read in ([`ValueReader::pair`]): the padded side's, when both
/// sides have it or the other side is plain; `None` for logical order.
fn device_order<'a>(golden: &'a TensorSlot, target: &'a TensorSlot) -> Option<&'a PaddedView> {
    let view = |slot: &'a TensorSlot| match &slot.data {
        Data::Padded { view, .. } => Some(view),
        _ => None,
    };
    let plain = |slot: &TensorSlot| matches!(slot.data, Data::Plain { .. });
    match (view(golden), view(target)) {
        (Some(g), Some(t)) if g == t => Some(g),
        (Some(g), None) if plain(target) => Some(g),
        (None, Some(t)) if plain(golden) => Some(t),
        _ => None,
    }
}

/// The file at `path`, opened for reading its blocks.
fn open_blocks(path: &Path, map: Mode) -> Result<Blocks, String> {
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot stat: {e}"))?
        .len();
    Ok(Blocks::new(file, len, map))
}

/// The size of `slot`'s elements, if npgx reads its values.
fn real_size(slot: &TensorSlot) -> Result<usize, String> {
    slot.element
        .size()
        .filter(|_| is_real(slot.element))
        .ok_or_else(|| format!("{} values are not read", slot.element.numpy_name()))
}

/// Test support for the vector decoders (x86 here, NEON in `compare/metrics/neon.rs`): `decode(el,
/// bytes, room)` — the vector path's values, `None` if it did not run — must give
/// [`decode_to`]'s values bit for bit (NaN payloads aside) for fp16, bf16 and fp32 over every
/// 16-bit pattern (zeros, subnormals, the largest finite, infinities, NaNs; for fp32, pairs of
/// them as a value's halves) and around the vector length.
#[cfg(test)]
pub fn agrees_with_decode_to(decode: impl Fn(Element, &[u8], usize) -> Option<Vec<f64>>) {
    let all: Vec<u8> = (0..=u16::MAX).flat_map(u16::to_le_bytes).collect();
    let words: Vec<u8> = (0..=u16::MAX)
        .step_by(7)
        .flat_map(|h| [h.to_le_bytes(), h.wrapping_mul(40_503).to_le_bytes()])
        .flatten()
        .collect();
    for (el, bytes, room) in [
        (Element::F16, &all[..], 1 << 16),
        (Element::F16, &all[..], 13),
        (Element::F16, &all[..2 * 13 + 1], 64),
        (Element::F16, &all[2 * 0x7BF8..2 * 0x7C05], 64),
        (Element::F16, &all[..0], 8),
        (Element::Bf16, &all[..], 1 << 16),
        (Element::Bf16, &all[..2 * 13 + 1], 64),
        (Element::F32, &all[..], 1 << 15),
        (Element::F32, &words[..], 1 << 14),
        (Element::F32, &words[..4 * 13 + 3], 64),
    ] {
        let got = decode(el, bytes, room).expect("the vector path ran");
        let mut want = vec![0.0; room];
        let n = decode_to(el, bytes, &mut want);
        want.truncate(n);
        assert_eq!(got.len(), want.len(), "{el:?}");
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{el:?} #{i}: {a} vs {b}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::list::dump_slot;
    use npgx_parsers::dump::dtype::DType;
    use npgx_parsers::dump::format::Format;
    use npgx_parsers::dump::header::{Io, TensorDesc};

    /// The next at most `max` values of `r`, decoded; empty at the end.
    fn next_values(r: &mut ValueReader, out: &mut Vec<f64>, max: usize) -> usize {
        let el = r.element();
        out.clear();
        r.next_with(max, |bytes| decode_into(el, bytes, out))
            .unwrap();
        out.len()
    }

    /// Appends the decoded values of `bytes` to `out`.
    fn decode_into(el: Element, bytes: &[u8], out: &mut Vec<f64>) {
        let start = out.len();
        out.resize(start + bytes.len(), 0.0);
        let n = decode_to(el, bytes, &mut out[start..]);
        out.truncate(start + n);
    }

    // The NEON decoder's test is in `compare/metrics/neon.rs`.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_decoding_agrees_with_the_portable_one() {
        if !crate::simd::vector_path_or_skip("values: vector decoding") {
            return;
        }
        /// `decode_to_x86` when the CPU has the features (`None` otherwise).
        struct Vector<'a>(Element, &'a [u8], usize);
        impl crate::simd::Kernel for Vector<'_> {
            type Output = Option<Vec<f64>>;
            fn run(self) -> Option<Vec<f64>> {
                None
            }
            fn run_x86(self, f: crate::simd::x86::Features) -> Option<Vec<f64>> {
                let mut out = vec![0.0; self.2];
                let n = decode_to_x86(f, self.0, self.1, &mut out);
                out.truncate(n);
                Some(out)
            }
        }
        agrees_with_decode_to(|el, bytes, room| crate::simd::dispatch(Vector(el, bytes, room)));
    }

    #[cfg(all(target_arch = "x86_64", npgx_avx512))]
    #[test]
    fn avx512_decoding_agrees_with_the_portable_one() {
        use crate::simd::x86::avx512;
        if !avx512::available() {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "values: AVX-512 decoding: SKIPPED, this CPU has no AVX-512F"
            );
            return;
        }
        /// `decode_to_x86_512`, on the AVX-512 path.
        struct Wide<'a>(Element, &'a [u8], usize);
        impl crate::simd::Kernel for Wide<'_> {
            type Output = Option<Vec<f64>>;
            fn run(self) -> Option<Vec<f64>> {
                None
            }
            const AVX512: bool = true;
            fn run_x86_512(self, f: avx512::Features) -> Option<Vec<f64>> {
                let mut out = vec![0.0; self.2];
                let n = decode_to_x86_512(f, self.0, self.1, &mut out);
                out.truncate(n);
                Some(out)
            }
        }
        // SAFETY: `available` said yes.
        agrees_with_decode_to(|el, bytes, room| unsafe { avx512::run_simd(Wide(el, bytes, room)) });
    }

    #[test]
    fn decodes_each_type_exactly() {
        let mut out = Vec::new();
        decode_into(
            Element::F16,
            &[0x00, 0x3C, 0x00, 0x7C, 0x01, 0x00],
            &mut out,
        );
        assert_eq!(out[0], 1.0);
        assert_eq!(out[1], f64::INFINITY);
        assert_eq!(out[2], 2f64.powi(-24));
        out.clear();
        decode_into(Element::Bf16, &[0x80, 0x3F], &mut out);
        decode_into(Element::I8, &[0xFF], &mut out);
        decode_into(Element::Bool, &[2], &mut out);
        decode_into(Element::I64, &(-5i64).to_le_bytes(), &mut out);
        decode_into(Element::F8E4m3fn, &[0x7F], &mut out);
        assert_eq!(&out[..4], &[1.0, -1.0, 1.0, -5.0]);
        assert!(out[4].is_nan());
    }

    #[test]
    fn plain_slot_streams_in_chunks() {
        let dir = std::env::temp_dir().join(format!("npgx-values-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.bin");
        let vals: Vec<u8> = (0..10).flat_map(|i| (i as f32).to_le_bytes()).collect();
        std::fs::write(&path, [&[9u8; 3][..], &vals].concat()).unwrap();
        let slot = TensorSlot {
            io: Io::Output,
            index: 0,
            dtype: DType::Float,
            element: Element::F32,
            format: Format::primary(Format::ND),
            shape: vec![10],
            original_op: None,
            data: Data::Plain { offset: 3, len: 40 },
            unordered: None,
        };
        let mut r = ValueReader::open(&path, &slot, Mode::default()).unwrap();
        let mut out = Vec::new();
        let mut all = Vec::new();
        while next_values(&mut r, &mut out, 4) > 0 {
            all.extend_from_slice(&out);
        }
        assert_eq!(all, (0..10).map(f64::from).collect::<Vec<_>>());

        // NC1HWC0 (N=1, C=3, H=1, W=2, C0=4) comes back as NCHW, padding dropped.
        let padded = dir.join("p.bin");
        std::fs::write(&padded, [0u8, 2, 4, 0, 1, 3, 5, 0]).unwrap();
        let fmt = Format::primary(Format::NC1HWC0);
        let desc = TensorDesc {
            io: Io::Input,
            index: 1,
            dtype: DType::Uint8,
            format: fmt,
            shape: vec![1, 1, 1, 2, 4],
            original_shape: vec![1, 3, 1, 2],
            size: 8,
            address: None,
            input_type: None,
            original_name: None,
            original_output_index: None,
        };
        let slot = dump_slot(&desc, 8, 0, None).unwrap();
        assert_eq!(slot.shape, vec![1, 3, 1, 2]);
        let mut r = ValueReader::open(&padded, &slot, Mode::default()).unwrap();
        next_values(&mut r, &mut out, 100);
        assert_eq!(out, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        // A truncated block and a shape the block cannot hold are errors of the tensor.
        assert!(dump_slot(&desc, 7, 0, None)
            .unwrap_err()
            .0
            .contains("truncated"));
        let wrong = TensorDesc {
            shape: vec![1, 1, 1, 3, 4],
            ..desc
        };
        let unordered = dump_slot(&wrong, 8, 0, None).unwrap();
        assert!(unordered.unordered.is_some());
        assert!(crate::dump::list::ordered_slot(unordered).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Every chunk of both readers of a pair, as (golden, target) value lists.
    fn read_pair(
        g: (&Path, &TensorSlot),
        t: (&Path, &TensorSlot),
        max: usize,
    ) -> Vec<(Vec<f64>, Vec<f64>)> {
        let (mut rg, mut rt) = ValueReader::pair(g, t, Mode::default()).unwrap();
        let mut chunks = Vec::new();
        loop {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let (na, nb) = (
                next_values(&mut rg, &mut a, max),
                next_values(&mut rt, &mut b, max),
            );
            assert_eq!(na, nb, "both sides give the same elements per call");
            if na == 0 {
                return chunks;
            }
            chunks.push((a, b));
        }
    }

    #[test]
    fn a_pair_reads_in_an_order_both_sides_share() {
        let dir = std::env::temp_dir().join(format!("npgx-pair-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // NC1HWC0 of NCHW (1, 3, 2, 2) with C0 2: C1 = 2, the second block holds channel 2 and
        // one row of padding per (h, w); 255 marks the padding.
        let logical: Vec<u8> = (0..12).collect();
        let mut device = Vec::new();
        for c1 in 0..2u8 {
            for hw in 0..4u8 {
                for c0 in 0..2u8 {
                    let c = c1 * 2 + c0;
                    device.push(if c < 3 {
                        logical[usize::from(c * 4 + hw)]
                    } else {
                        255
                    });
                }
            }
        }
        let (dev_path, nd_path) = (dir.join("dev.bin"), dir.join("nd.bin"));
        std::fs::write(&dev_path, &device).unwrap();
        std::fs::write(&nd_path, &logical).unwrap();
        let desc = TensorDesc {
            io: Io::Output,
            index: 0,
            dtype: DType::Uint8,
            format: Format::primary(Format::NC1HWC0),
            shape: vec![1, 2, 2, 2, 2],
            original_shape: vec![1, 3, 2, 2],
            size: 16,
            address: None,
            input_type: None,
            original_name: None,
            original_output_index: None,
        };
        let padded = dump_slot(&desc, 16, 0, None).unwrap();
        let plain = TensorSlot {
            format: Format::primary(Format::ND),
            data: Data::Plain { offset: 0, len: 12 },
            ..padded.clone()
        };
        let (dev, nd) = ((dev_path.as_path(), &padded), (nd_path.as_path(), &plain));
        let flat = |chunks: &[(Vec<f64>, Vec<f64>)]| -> (Vec<f64>, Vec<f64>) {
            chunks
                .iter()
                .fold((Vec::new(), Vec::new()), |(mut a, mut b), (x, y)| {
                    a.extend(x);
                    b.extend(y);
                    (a, b)
                })
        };
        // The same layout: device rows, padding dropped (channels 0, 1 per (h, w), then 2).
        let device_order = vec![0.0, 4.0, 1.0, 5.0, 2.0, 6.0, 3.0, 7.0, 8.0, 9.0, 10.0, 11.0];
        let chunks = read_pair(dev, dev, 3);
        assert!(chunks.len() > 1 && !chunks.iter().flat_map(|c| &c.0).any(|&v| v == 255.0));
        assert_eq!(flat(&chunks), (device_order.clone(), device_order.clone()));
        // Against the plain tensor: the plain side in the padded side's device order.
        assert_eq!(
            flat(&read_pair(nd, dev, 3)),
            (device_order.clone(), device_order.clone())
        );
        assert_eq!(
            flat(&read_pair(dev, nd, 5)),
            (device_order.clone(), device_order)
        );
        // Plain against plain: logical order.
        let logical_f: Vec<f64> = logical.iter().map(|&v| f64::from(v)).collect();
        assert_eq!(flat(&read_pair(nd, nd, 5)), (logical_f.clone(), logical_f));
        // A plain side shorter than the layout is an error, not a panic.
        let short = TensorSlot {
            data: Data::Plain { offset: 0, len: 8 },
            ..plain.clone()
        };
        assert!(ValueReader::pair((nd_path.as_path(), &short), dev, Mode::default()).is_err());
        // Which pairs hold no whole tensor: one layout on both sides, or plain on both.
        assert!(ValueReader::streams(&padded, &padded) && ValueReader::streams(&plain, &short));
        assert!(!ValueReader::streams(&plain, &padded) && !ValueReader::streams(&padded, &plain));
        let other = dump_slot(
            &TensorDesc {
                shape: vec![1, 1, 2, 2, 4],
                ..desc.clone()
            },
            16,
            0,
            None,
        )
        .unwrap();
        assert!(matches!(other.data, Data::Padded { .. }));
        assert!(!ValueReader::streams(&padded, &other));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
