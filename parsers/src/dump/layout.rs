//! Device formats with padding (`dump-data.md` §6) and strided views, brought to the logical
//! C-order tensor through ndarray views.
//!
//! A padded device format stores a tensor in blocks whose innermost dimension (C0 or W0) is
//! padded with zeros. Read row by row — a row being one run of the innermost device dimension —
//! each row holds a prefix of real elements followed by padding, or nothing but padding. A
//! [`PaddedView`] answers "how many real elements does row `r` start with", which is all a
//! streaming reader needs to compute statistics over logical elements only.
//!
//! Conversion ([`PaddedView::gather`], and its inverse [`PaddedView::scatter`]) never computes an
//! index per element: the device buffer is an ndarray view of its C-order device shape, its axes
//! permuted into the logical order with each padded logical axis split in two (blocks, block);
//! the padding is sliced off, and what remains is copied to (or from) a view of the logical
//! buffer with the same split. A padded axis whose length is not a multiple of its block is
//! taken in two rectangular parts, its whole blocks and its last partial block, so every copy
//! is between two strided views of the same shape. Elements are fixed-size byte chunks
//! (`[u8; N]`), so every data type takes the same path.
//!
//! C0, N0, H0 and W0 are taken from the device shape, never from the data type. The logical
//! shape is the header's `original_shape`, which may be in NCHW, NHWC or HWCN order (NCDHW,
//! NDHWC or DHWCN for 3-D formats): the order that agrees with the device shape is chosen. When
//! none agrees, or the format has no padding, there is no view and the device buffer is the data.
//!
//! [`gather_strided`] and [`strided_range`] bring a strided view of a storage (a transposed or
//! expanded `.pt` tensor) to C order the same way.

use std::cmp::Reverse;
use std::ops::Range;

use ndarray::{ArrayBase, ArrayView, ArrayViewMut, Axis, IxDyn, RawData, ShapeBuilder, Slice};

use super::format::Format;

/// Dispatches on an element size to the `[u8; N]` instance of a generic function returning an
/// `Option` (its element type `E`); other sizes give `None`.
macro_rules! by_size {
    ($es:expr, $f:ident($($arg:expr),*)) => {
        match $es {
            1 => $f::<[u8; 1]>($($arg),*),
            2 => $f::<[u8; 2]>($($arg),*),
            4 => $f::<[u8; 4]>($($arg),*),
            8 => $f::<[u8; 8]>($($arg),*),
            16 => $f::<[u8; 16]>($($arg),*),
            _ => None,
        }
    };
}

/// Row geometry of a padded device layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaddedView {
    kind: Kind,
    /// Elements per row (the innermost device dimension; 1 for C1HWNCoC0, whose real elements
    /// are not a prefix of their C0 run).
    pub row_len: u64,
    /// Number of rows in the device buffer.
    pub rows: u64,
    /// Elements of the logical tensor.
    pub logical_elements: u64,
    /// Logical shape (the header's `original_shape`).
    pub logical_shape: Vec<u64>,
    /// Position of each logical axis name in `logical_shape`, as (n, c, d, h, w) where they apply.
    axes: Axes,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Axes {
    n: usize,
    c: usize,
    d: Option<usize>,
    h: usize,
    w: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// `(N, [D,] C1, H, W, C0)`.
    Nc1hwc0 {
        n: u64,
        c: u64,
        c0: u64,
        c1: u64,
        d: u64,
        h: u64,
        w: u64,
    },
    /// `([D·]C1·H·W, N1, N0, C0)`.
    FractalZ {
        n: u64,
        n0: u64,
        n1: u64,
        c: u64,
        c0: u64,
        c1: u64,
        d: u64,
        h: u64,
        w: u64,
    },
    /// `(batch…, W1, H1, H0, W0)` over logical `(batch…, R, Cc)`; `b` is the flat batch.
    FractalNz {
        b: u64,
        r: u64,
        cc: u64,
        w0: u64,
        w1: u64,
        h0: u64,
        h1: u64,
    },
    /// Grouped FRACTAL_Z (`sub_format` = groups > 1; dump-data.md §6): `e` groups share one
    /// fractal block, `(⌈groups/e⌉·C1·H·W, cout_opt/16, 16, K)`, group `g`'s (`ev = g % e`) channels
    /// at `ci = ev·cin + c`, its filters at `co = ev·cout + n`. One element per row: the real
    /// elements of a K run are not its prefix.
    FractalZGroups {
        groups: u64,
        e: u64,
        cin: u64,
        cout: u64,
        k: u64,
        c1: u64,
        h: u64,
        w: u64,
        cout_opt: u64,
        g1: u64,
    },
    /// `(C1, H, W, N, Co, C0)` with Co = C0: channel `c` sits at Co = C0 = `c % C0`, the
    /// diagonal of each (Co, C0) block; everything off it is zero.
    C1hwncoc0 {
        n: u64,
        c: u64,
        c0: u64,
        c1: u64,
        h: u64,
        w: u64,
    },
}

fn ceil_div(a: u64, b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `None` on overflow or when either is zero.
fn lcm(a: u64, b: u64) -> Option<u64> {
    if a == 0 || b == 0 {
        return None;
    }
    (a / gcd(a, b)).checked_mul(b)
}

fn product(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

/// Candidate axis orders for a 4-D (or 5-D) logical shape: (n, c, [d,] h, w) positions.
const ORDERS_4D: [Axes; 3] = [
    Axes {
        n: 0,
        c: 1,
        d: None,
        h: 2,
        w: 3,
    }, // NCHW
    Axes {
        n: 0,
        c: 3,
        d: None,
        h: 1,
        w: 2,
    }, // NHWC
    Axes {
        n: 3,
        c: 2,
        d: None,
        h: 0,
        w: 1,
    }, // HWCN
];
const ORDERS_5D: [Axes; 3] = [
    Axes {
        n: 0,
        c: 1,
        d: Some(2),
        h: 3,
        w: 4,
    }, // NCDHW
    Axes {
        n: 0,
        c: 4,
        d: Some(1),
        h: 2,
        w: 3,
    }, // NDHWC
    Axes {
        n: 4,
        c: 3,
        d: Some(0),
        h: 1,
        w: 2,
    }, // DHWCN
];

impl PaddedView {
    /// Builds the view for a tensor, or `None` when the format has no padding or the shapes
    /// disagree with every known axis order (then the device buffer is read as is).
    pub fn new(format: Format, device: &[u64], logical: &[u64]) -> Option<PaddedView> {
        if logical.is_empty() || !format.is_padded_device_format() || device.contains(&0) {
            return None;
        }
        let logical_elements = product(logical)?;
        let device_elements = product(device)?;
        let view = match format.primary {
            Format::NC1HWC0 | Format::NC1HWC0_C04 => Self::nc1hwc0(device, logical, false),
            Format::NDC1HWC0 => Self::nc1hwc0(device, logical, true),
            Format::FRACTAL_Z if format.sub <= 1 => Self::fractal_z(device, logical, false),
            Format::FRACTAL_Z => Self::fractal_z_groups(device, logical, u64::from(format.sub)),
            Format::FRACTAL_Z_3D => Self::fractal_z(device, logical, true),
            Format::FRACTAL_NZ | Format::FRACTAL_NZ_C0_16 | Format::FRACTAL_NZ_C0_32 => {
                Self::fractal_nz(device, logical)
            }
            Format::C1HWNCOC0 => Self::c1hwncoc0(device, logical),
            _ => None,
        }?;
        let (kind, axes) = view;
        let row_len = match kind {
            Kind::C1hwncoc0 { .. } | Kind::FractalZGroups { .. } => 1,
            _ => *device.last()?,
        };
        let v = PaddedView {
            kind,
            row_len,
            rows: device_elements / row_len,
            logical_elements,
            logical_shape: logical.to_vec(),
            axes,
        };
        // The conversion's views must exist for these shapes.
        v.geometry()?;
        // The rows must hold exactly the logical elements, or the view is wrong.
        let real: u64 = (0..v.rows.min(1 << 16)).map(|r| v.real_in_row(r)).sum();
        (v.rows > 1 << 16 || real == logical_elements).then_some(v)
    }

    fn nc1hwc0(device: &[u64], logical: &[u64], three_d: bool) -> Option<(Kind, Axes)> {
        let (orders, want): (&[Axes], usize) = if three_d {
            (&ORDERS_5D, 6)
        } else {
            (&ORDERS_4D, 5)
        };
        if device.len() != want || logical.len() != want - 1 {
            return None;
        }
        let (dn, dd, dc1, dh, dw, dc0) = if three_d {
            (
                device[0], device[1], device[2], device[3], device[4], device[5],
            )
        } else {
            (device[0], 1, device[1], device[2], device[3], device[4])
        };
        orders.iter().find_map(|a| {
            let d = a.d.map_or(1, |i| logical[i]);
            let ok = logical[a.n] == dn
                && d == dd
                && logical[a.h] == dh
                && logical[a.w] == dw
                && ceil_div(logical[a.c], dc0) == dc1;
            ok.then(|| {
                (
                    Kind::Nc1hwc0 {
                        n: dn,
                        c: logical[a.c],
                        c0: dc0,
                        c1: dc1,
                        d: dd,
                        h: dh,
                        w: dw,
                    },
                    *a,
                )
            })
        })
    }

    fn fractal_z(device: &[u64], logical: &[u64], three_d: bool) -> Option<(Kind, Axes)> {
        let orders: &[Axes] = if three_d { &ORDERS_5D } else { &ORDERS_4D };
        if device.len() != 4 || logical.len() != orders[0].d.map_or(4, |_| 5) {
            return None;
        }
        let (rows_outer, n1, n0, c0) = (device[0], device[1], device[2], device[3]);
        orders.iter().find_map(|a| {
            let (n, c, h, w) = (logical[a.n], logical[a.c], logical[a.h], logical[a.w]);
            let d = a.d.map_or(1, |i| logical[i]);
            let c1 = ceil_div(c, c0);
            let ok = d.checked_mul(c1)?.checked_mul(h)?.checked_mul(w)? == rows_outer
                && ceil_div(n, n0) == n1;
            ok.then_some((
                Kind::FractalZ {
                    n,
                    n0,
                    n1,
                    c,
                    c0,
                    c1,
                    d,
                    h,
                    w,
                },
                *a,
            ))
        })
    }

    /// Grouped FRACTAL_Z: `cin` = C, `cout` = N / groups, K = C0;
    /// `e = min(lcm(lcm(cin, K)/cin, lcm(cout, 16)/cout), groups)`, `cin_opt = align(e·cin, K)`,
    /// `cout_opt = align(e·cout, 16)` (msaccucmp's `convert_NCHW_to_FRACTAL_Z`; msprobe's C++
    /// divides the second lcm by cin, which the spec calls a bug).
    fn fractal_z_groups(device: &[u64], logical: &[u64], groups: u64) -> Option<(Kind, Axes)> {
        let &[rows_outer, n1, n0, k] = device else {
            return None;
        };
        if logical.len() != 4 || n0 != 16 || groups == 0 || k == 0 {
            return None;
        }
        ORDERS_4D.iter().find_map(|a| {
            let (n, cin, h, w) = (logical[a.n], logical[a.c], logical[a.h], logical[a.w]);
            if n % groups != 0 || n == 0 || cin == 0 {
                return None;
            }
            let cout = n / groups;
            let e = (lcm(lcm(cin, k)? / cin, lcm(cout, 16)? / cout)?).min(groups);
            let cin_opt = e.checked_mul(cin)?.div_ceil(k).checked_mul(k)?;
            let cout_opt = e.checked_mul(cout)?.div_ceil(16).checked_mul(16)?;
            let c1 = cin_opt / k;
            let g1 = groups.div_ceil(e);
            let ok = product(&[g1, c1, h, w])? == rows_outer && n1.checked_mul(16)? == cout_opt;
            ok.then_some((
                Kind::FractalZGroups {
                    groups,
                    e,
                    cin,
                    cout,
                    k,
                    c1,
                    h,
                    w,
                    cout_opt,
                    g1,
                },
                *a,
            ))
        })
    }

    fn fractal_nz(device: &[u64], logical: &[u64]) -> Option<(Kind, Axes)> {
        let (batch, r, cc) = match logical {
            [cc] => (&[][..], 1, *cc),
            [b @ .., r, cc] => (b, *r, *cc),
            [] => return None,
        };
        if device.len() != batch.len() + 4 || device[..batch.len()] != *batch {
            return None;
        }
        let k = batch.len();
        let (w1, h1, h0, w0) = (device[k], device[k + 1], device[k + 2], device[k + 3]);
        let ok = ceil_div(cc, w0) == w1 && ceil_div(r, h0) == h1;
        let axes = Axes {
            n: 0,
            c: logical.len() - 1,
            d: None,
            h: logical.len().saturating_sub(2),
            w: 0,
        };
        ok.then_some((
            Kind::FractalNz {
                b: product(batch)?,
                r,
                cc,
                w0,
                w1,
                h0,
                h1,
            },
            axes,
        ))
    }

    /// GE `format_transfer_c1hwncoc0_hwcn.cc`: device `(C1, H, W, N, Co, C0)`, Co = C0, N not
    /// padded.
    fn c1hwncoc0(device: &[u64], logical: &[u64]) -> Option<(Kind, Axes)> {
        let &[dc1, dh, dw, dn, dco, dc0] = device else {
            return None;
        };
        if logical.len() != 4 || dco != dc0 {
            return None;
        }
        ORDERS_4D.iter().find_map(|a| {
            let ok = logical[a.n] == dn
                && logical[a.h] == dh
                && logical[a.w] == dw
                && ceil_div(logical[a.c], dc0) == dc1;
            ok.then(|| {
                (
                    Kind::C1hwncoc0 {
                        n: dn,
                        c: logical[a.c],
                        c0: dc0,
                        c1: dc1,
                        h: dh,
                        w: dw,
                    },
                    *a,
                )
            })
        })
    }

    /// How many real elements row `row` starts with (the rest of the row is padding).
    pub fn real_in_row(&self, row: u64) -> u64 {
        match self.kind {
            Kind::Nc1hwc0 {
                c, c0, c1, h, w, ..
            } => {
                let c1_i = (row / (h * w)) % c1;
                c.saturating_sub(c1_i * c0).min(c0)
            }
            Kind::FractalZ {
                n,
                n0,
                n1,
                c,
                c0,
                c1,
                h,
                w,
                ..
            } => {
                let n1n0 = n1 * n0;
                if row % n1n0 >= n {
                    return 0;
                }
                let c1_i = ((row / n1n0) / (h * w)) % c1;
                c.saturating_sub(c1_i * c0).min(c0)
            }
            Kind::FractalNz {
                r,
                cc,
                w0,
                w1,
                h0,
                h1,
                ..
            } => {
                let h1h0 = h1 * h0;
                if row % h1h0 >= r {
                    return 0;
                }
                let w1_i = (row / h1h0) % w1;
                cc.saturating_sub(w1_i * w0).min(w0)
            }
            Kind::FractalZGroups {
                groups,
                e,
                cin,
                cout,
                k,
                c1,
                h,
                w,
                cout_opt,
                ..
            } => {
                if [k, cout_opt, w, h, c1, cout].contains(&0) {
                    return 0;
                }
                // One element per row: (g1, c1, h, w, co, k) in C order.
                let kk = row % k;
                let co = (row / k) % cout_opt;
                let c1_g1 = row / (k * cout_opt * w * h);
                let (c1_i, g1_i) = (c1_g1 % c1, c1_g1 / c1);
                let ev = co / cout;
                let ci = c1_i * k + kk;
                u64::from(ev < e && g1_i * e + ev < groups && ci >= ev * cin && ci < ev * cin + cin)
            }
            Kind::C1hwncoc0 { n, c, c0, h, w, .. } => {
                // One element per row: (c1, h, w, n, co, c0) in C order.
                let c0_i = row % c0;
                let co_i = (row / c0) % c0;
                let c1_i = row / (c0 * c0 * n * w * h);
                u64::from(co_i == c0_i && c1_i * c0 + c0_i < c)
            }
        }
    }

    /// Converts a device buffer of `elem_size`-byte elements back to the logical tensor in C
    /// order over [`PaddedView::logical_shape`], dropping the padding. `None` when `data` is
    /// shorter than the device layout or `elem_size` is not 1, 2, 4, 8 or 16.
    pub fn gather(&self, data: &[u8], elem_size: usize) -> Option<Vec<u8>> {
        let geo = self.geometry()?;
        let device = data.get(..self.device_bytes(elem_size)?)?;
        let mut out = Vec::new();
        grow(
            &mut out,
            usize::try_from(self.logical_elements.checked_mul(elem_size as u64)?).ok()?,
        )?;
        by_size!(elem_size, copy_parts(&geo, Way::Gather, device, &mut out))?;
        Some(out)
    }

    /// The inverse of [`PaddedView::gather`]: the device buffer (padding zero) of a logical
    /// tensor in C order. `None` when `logical` is shorter than the logical tensor or
    /// `elem_size` is not 1, 2, 4, 8 or 16.
    pub fn scatter(&self, logical: &[u8], elem_size: usize) -> Option<Vec<u8>> {
        let geo = self.geometry()?;
        let bytes = usize::try_from(self.logical_elements.checked_mul(elem_size as u64)?).ok()?;
        let logical = logical.get(..bytes)?;
        let mut out = Vec::new();
        grow(&mut out, self.device_bytes(elem_size)?)?;
        by_size!(elem_size, copy_parts(&geo, Way::Scatter, logical, &mut out))?;
        Some(out)
    }

    /// Bytes of the device buffer.
    fn device_bytes(&self, elem_size: usize) -> Option<usize> {
        let n = self.rows.checked_mul(self.row_len)?;
        usize::try_from(n.checked_mul(elem_size as u64)?).ok()
    }

    /// The views of this layout: the device array in the canonical order of its logical axes.
    fn geometry(&self) -> Option<Geometry> {
        let us = |v: u64| usize::try_from(v).ok();
        let shape: Vec<usize> = self
            .logical_shape
            .iter()
            .map(|&d| us(d))
            .collect::<Option<_>>()?;
        // C-order strides of the logical buffer, in elements.
        let mut strides = vec![1usize; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1].checked_mul(shape[i + 1])?;
        }
        let dim = |axis: Option<usize>, block: Option<u64>| -> Option<Dim> {
            Some(match axis {
                Some(a) => Dim {
                    len: *shape.get(a)?,
                    stride: *strides.get(a)?,
                    block: match block {
                        Some(b) => Some(us(b)?),
                        None => None,
                    },
                },
                None => Dim {
                    len: 1,
                    stride: 0,
                    block: None,
                },
            })
        };
        let a = self.axes;
        Some(match self.kind {
            Kind::Nc1hwc0 {
                n, c0, c1, d, h, w, ..
            } => Geometry {
                // device (N, D, C1, H, W, C0) → (N, D, C1, C0, H, W)
                device: [n, d, c1, h, w, c0]
                    .into_iter()
                    .map(us)
                    .collect::<Option<_>>()?,
                diagonal: None,
                perm: vec![0, 1, 2, 5, 3, 4],
                dims: vec![
                    dim(Some(a.n), None)?,
                    dim(a.d, None)?,
                    dim(Some(a.c), Some(c0))?,
                    dim(Some(a.h), None)?,
                    dim(Some(a.w), None)?,
                ],
                fixed: None,
            },
            Kind::FractalZ {
                n0,
                n1,
                c0,
                c1,
                d,
                h,
                w,
                ..
            } => Geometry {
                // device (D, C1, H, W, N1, N0, C0) → (N1, N0, D, C1, C0, H, W)
                device: [d, c1, h, w, n1, n0, c0]
                    .into_iter()
                    .map(us)
                    .collect::<Option<_>>()?,
                diagonal: None,
                perm: vec![4, 5, 0, 1, 6, 2, 3],
                dims: vec![
                    dim(Some(a.n), Some(n0))?,
                    dim(a.d, None)?,
                    dim(Some(a.c), Some(c0))?,
                    dim(Some(a.h), None)?,
                    dim(Some(a.w), None)?,
                ],
                fixed: None,
            },
            Kind::FractalNz {
                b,
                r,
                cc,
                w0,
                w1,
                h0,
                h1,
            } => {
                // device (B, W1, H1, H0, W0) → (B, H1, H0, W1, W0) over logical (B, R, Cc)
                let (r, cc) = (us(r)?, us(cc)?);
                Geometry {
                    device: [b, w1, h1, h0, w0]
                        .into_iter()
                        .map(us)
                        .collect::<Option<_>>()?,
                    diagonal: None,
                    perm: vec![0, 2, 3, 1, 4],
                    dims: vec![
                        Dim {
                            len: us(b)?,
                            stride: r.checked_mul(cc)?,
                            block: None,
                        },
                        Dim {
                            len: r,
                            stride: cc,
                            block: Some(us(h0)?),
                        },
                        Dim {
                            len: cc,
                            stride: 1,
                            block: Some(us(w0)?),
                        },
                    ],
                    fixed: None,
                }
            }
            Kind::FractalZGroups {
                groups,
                e,
                cin,
                cout,
                k,
                c1,
                h,
                w,
                cout_opt,
                g1,
            } => {
                // device (G1, C1, H, W, cout_opt, K) → (G1, cout_opt, C1, K, H, W); one part per
                // shared-block slot `ev` and per C1 block its channels touch: g1 → group
                // g1·e + ev, co → filter ev·cout + n, (c1, k) → channel c1·K + k − ev·cin.
                let (sn, sc, sh, sw) = (
                    *strides.get(a.n)?,
                    *strides.get(a.c)?,
                    *strides.get(a.h)?,
                    *strides.get(a.w)?,
                );
                let device: Vec<usize> = [g1, c1, h, w, cout_opt, k]
                    .into_iter()
                    .map(us)
                    .collect::<Option<_>>()?;
                let (cin, cout, k) = (us(cin)?, us(cout)?, us(k)?);
                let (hu, wu) = (us(h)?, us(w)?);
                let plain = |len| Dim {
                    len,
                    stride: 0,
                    block: None,
                };
                let mut parts = Vec::new();
                for ev in 0..us(e)? {
                    let groups_here = us(groups)?.saturating_sub(ev).div_ceil(us(e)?);
                    if groups_here == 0 {
                        continue;
                    }
                    let (lo, hi) = (ev.checked_mul(cin)?, ev.checked_mul(cin)?.checked_add(cin)?);
                    for j in lo / k..hi.div_ceil(k) {
                        let (from, to) = (lo.max(j * k), hi.min((j + 1) * k));
                        parts.push(Part {
                            device: vec![
                                0..groups_here,
                                ev * cout..ev * cout + cout,
                                j..j + 1,
                                from - j * k..to - j * k,
                                0..hu,
                                0..wu,
                            ],
                            shape: vec![groups_here, cout, 1, to - from, hu, wu],
                            strides: vec![
                                us(e)?.checked_mul(cout)?.checked_mul(sn)?,
                                sn,
                                sc,
                                sc,
                                sh,
                                sw,
                            ],
                            offset: ev
                                .checked_mul(cout)?
                                .checked_mul(sn)?
                                .checked_add((from - lo).checked_mul(sc)?)?,
                        });
                    }
                }
                Geometry {
                    device,
                    diagonal: None,
                    perm: vec![0, 4, 1, 5, 2, 3],
                    dims: [us(g1)?, us(cout_opt)?, us(c1)?, k, hu, wu]
                        .into_iter()
                        .map(plain)
                        .collect(),
                    fixed: Some(parts),
                }
            }
            Kind::C1hwncoc0 {
                n, c0, c1, h, w, ..
            } => {
                // device (C1, H, W, N, Co·C0), its last axis taken every C0 + 1 elements (the
                // diagonal Co = C0) → (C1, H, W, N, C0) → (N, C1, C0, H, W)
                let c0u = us(c0)?;
                Geometry {
                    device: vec![us(c1)?, us(h)?, us(w)?, us(n)?, c0u.checked_mul(c0u)?],
                    diagonal: Some((4, c0u.checked_add(1)?)),
                    perm: vec![3, 0, 4, 1, 2],
                    dims: vec![
                        dim(Some(a.n), None)?,
                        dim(Some(a.c), Some(c0))?,
                        dim(Some(a.h), None)?,
                        dim(Some(a.w), None)?,
                    ],
                    fixed: None,
                }
            }
        })
    }
}

/// Appends `n` zero bytes to `out`; `None` (and `out` as it was) when the memory cannot be had,
/// so sizes taken from a file never abort the process.
fn grow(out: &mut Vec<u8>, n: usize) -> Option<()> {
    out.try_reserve_exact(n).ok()?;
    out.resize(out.len() + n, 0);
    Some(())
}

/// One logical axis, in the canonical order of a layout's [`Geometry`].
#[derive(Clone, Copy, Debug)]
struct Dim {
    /// Logical length.
    len: usize,
    /// Stride in the logical C-order buffer, in elements.
    stride: usize,
    /// The block of a padded axis: the device holds the axis as two, (⌈len / block⌉, block),
    /// the last block padded.
    block: Option<usize>,
}

/// A padded layout as ndarray sees it.
#[derive(Debug)]
struct Geometry {
    /// The device buffer as a C-order array of this shape.
    device: Vec<usize>,
    /// An axis of `device` taken with a step: (axis, step).
    diagonal: Option<(usize, usize)>,
    /// The axes of `device` (after `diagonal`) in the order of `dims`, a padded dim giving two.
    perm: Vec<usize>,
    /// The logical axes in canonical order.
    dims: Vec<Dim>,
    /// The parts, when the layout gives them itself (grouped FRACTAL_Z) instead of `dims`'
    /// blocks.
    fixed: Option<Vec<Part>>,
}

/// Which way [`copy_parts`] copies.
#[derive(Clone, Copy)]
enum Way {
    /// Device to logical.
    Gather,
    /// Logical to device.
    Scatter,
}

/// A rectangular part of the logical tensor that holds no padding on the device: each padded
/// axis taken as its whole blocks or as its last, partial one.
#[derive(Clone, Debug)]
struct Part {
    /// Range of each canonical device axis.
    device: Vec<Range<usize>>,
    /// The same elements in the logical buffer: shape, strides and offset, in elements.
    shape: Vec<usize>,
    strides: Vec<usize>,
    offset: usize,
}

impl Geometry {
    /// The device array `v` (of shape `device`) in canonical order, or `None` when its axes do
    /// not have the lengths of `dims`.
    fn arrange<S: RawData>(&self, mut v: ArrayBase<S, IxDyn>) -> Option<ArrayBase<S, IxDyn>> {
        if let Some((axis, step)) = self.diagonal {
            let step = isize::try_from(step).ok()?;
            if axis >= v.ndim() {
                return None;
            }
            v.slice_axis_inplace(Axis(axis), Slice::new(0, None, step));
        }
        let mut seen = vec![false; v.ndim()];
        for &p in &self.perm {
            if std::mem::replace(seen.get_mut(p)?, true) {
                return None;
            }
        }
        if self.perm.len() != v.ndim() {
            return None;
        }
        let v = v.permuted_axes(IxDyn(&self.perm));
        let mut lens = v.shape().iter();
        for d in &self.dims {
            let ok = match d.block {
                Some(b) => {
                    lens.next() == Some(&d.len.div_ceil(b.max(1))) && lens.next() == Some(&b)
                }
                None => lens.next() == Some(&d.len),
            };
            if !ok {
                return None;
            }
        }
        lens.next().is_none().then_some(v)
    }

    /// The parts of the logical tensor (see [`Part`]).
    fn parts(&self) -> Option<Vec<Part>> {
        if let Some(p) = &self.fixed {
            return Some(p.clone());
        }
        let mut parts = vec![Part {
            device: Vec::new(),
            shape: Vec::new(),
            strides: Vec::new(),
            offset: 0,
        }];
        for d in &self.dims {
            let Some(block) = d.block else {
                for p in &mut parts {
                    p.device.push(0..d.len);
                    p.shape.push(d.len);
                    p.strides.push(d.stride);
                }
                continue;
            };
            let (whole, rest) = (d.len / block, d.len % block);
            let outer = block.checked_mul(d.stride)?;
            // (outer range, inner length, offset of the first element)
            let mut pieces = Vec::new();
            if whole > 0 {
                pieces.push((0..whole, block, 0));
            }
            if rest > 0 {
                pieces.push((whole..whole + 1, rest, whole.checked_mul(outer)?));
            }
            let mut next = Vec::with_capacity(parts.len() * pieces.len());
            for p in &parts {
                for (range, inner, offset) in &pieces {
                    let mut q = Part {
                        device: p.device.clone(),
                        shape: p.shape.clone(),
                        strides: p.strides.clone(),
                        offset: p.offset.checked_add(*offset)?,
                    };
                    q.shape.extend([range.len(), *inner]);
                    q.device.extend([range.clone(), 0..*inner]);
                    q.strides.extend([outer, d.stride]);
                    next.push(q);
                }
            }
            parts = next;
        }
        Some(parts)
    }
}

/// Copies every [`Part`] between the device buffer and the logical one: `from` is the device
/// buffer when gathering, the logical one when scattering, `to` the other.
fn copy_parts<E: bytemuck::Pod>(
    geo: &Geometry,
    way: Way,
    from: &[u8],
    to: &mut [u8],
) -> Option<()> {
    let from: &[E] = bytemuck::try_cast_slice(from).ok()?;
    let to: &mut [E] = bytemuck::try_cast_slice_mut(to).ok()?;
    let logical_view = |p: &Part| IxDyn(&p.shape).strides(IxDyn(&p.strides));
    let device_slice = |p: &Part| {
        let ranges = p.device.clone();
        move |ax: ndarray::AxisDescription| Slice::from(ranges[ax.axis.index()].clone())
    };
    let parts = geo.parts()?;
    match way {
        Way::Gather => {
            let device = geo.arrange(ArrayView::from_shape(IxDyn(&geo.device), from).ok()?)?;
            for p in &parts {
                let src = device.slice_each_axis(device_slice(p));
                let dst =
                    ArrayViewMut::from_shape(logical_view(p), to.get_mut(p.offset..)?).ok()?;
                copy(dst, src);
            }
        }
        Way::Scatter => {
            let mut device = geo.arrange(ArrayViewMut::from_shape(IxDyn(&geo.device), to).ok()?)?;
            for p in &parts {
                let src = ArrayView::from_shape(logical_view(p), from.get(p.offset..)?).ok()?;
                copy(device.slice_each_axis_mut(device_slice(p)), src);
            }
        }
    }
    Some(())
}

/// `dst = src` for two views of the same shape, with the axes first put in the order of the
/// destination's strides and merged where both views allow it, so the inner loop runs over the
/// longest run there is.
fn copy<A: Copy>(mut dst: ArrayViewMut<'_, A, IxDyn>, mut src: ArrayView<'_, A, IxDyn>) {
    debug_assert_eq!(dst.shape(), src.shape());
    if dst.is_empty() {
        return;
    }
    let mut order: Vec<usize> = (0..dst.ndim()).collect();
    order.sort_by_key(|&a| Reverse(dst.strides()[a].unsigned_abs()));
    dst = dst.permuted_axes(IxDyn(&order));
    src = src.permuted_axes(IxDyn(&order));
    let mergeable = |shape: &[usize], strides: &[isize], i: usize| {
        shape[i] <= 1
            || shape[i + 1] <= 1
            || Some(strides[i])
                == isize::try_from(shape[i + 1])
                    .ok()
                    .and_then(|n| n.checked_mul(strides[i + 1]))
    };
    for i in 0..dst.ndim().saturating_sub(1) {
        if mergeable(dst.shape(), dst.strides(), i) && mergeable(src.shape(), src.strides(), i) {
            dst.merge_axes(Axis(i), Axis(i + 1));
            src.merge_axes(Axis(i), Axis(i + 1));
        }
    }
    for i in (0..dst.ndim()).rev() {
        if dst.len_of(Axis(i)) == 1 && dst.ndim() > 1 {
            dst = dst.index_axis_move(Axis(i), 0);
            src = src.index_axis_move(Axis(i), 0);
        }
    }
    dst.assign(&src);
}

/// The elements of a strided view of `storage` (`elem_size`-byte elements; element `idx` at
/// `Σ idx·stride`) in C order over `shape`. `None` when an element lies outside `storage` or
/// `elem_size` is not 1, 2, 4, 8 or 16.
pub fn gather_strided(
    storage: &[u8],
    shape: &[u64],
    stride: &[u64],
    elem_size: usize,
) -> Option<Vec<u8>> {
    let n = product(shape)?;
    let mut out = Vec::new();
    strided_range(storage, shape, stride, elem_size, 0, n, &mut out)?;
    Some(out)
}

/// Appends to `out` the elements `from .. from + count` (in C order over `shape`) of a strided
/// view of `storage`, as [`gather_strided`]; `None` (and `out` as it was) where that range or
/// the view does not fit.
pub fn strided_range(
    storage: &[u8],
    shape: &[u64],
    stride: &[u64],
    elem_size: usize,
    from: u64,
    count: u64,
    out: &mut Vec<u8>,
) -> Option<()> {
    let us =
        |v: &[u64]| -> Option<Vec<usize>> { v.iter().map(|&d| usize::try_from(d).ok()).collect() };
    let (shape, stride) = (us(shape)?, us(stride)?);
    let (from, count) = (usize::try_from(from).ok()?, usize::try_from(count).ok()?);
    if shape.len() != stride.len() || elem_size == 0 {
        return None;
    }
    let whole = storage.get(..storage.len() / elem_size * elem_size)?;
    let start = out.len();
    let r = by_size!(
        elem_size,
        strided_n(whole, &shape, &stride, from, count, out)
    );
    if r.is_none() {
        out.truncate(start);
    }
    r
}

fn strided_n<E: bytemuck::Pod>(
    storage: &[u8],
    shape: &[usize],
    stride: &[usize],
    from: usize,
    count: usize,
    out: &mut Vec<u8>,
) -> Option<()> {
    let storage: &[E] = bytemuck::try_cast_slice(storage).ok()?;
    let view = ArrayView::from_shape(IxDyn(shape).strides(IxDyn(stride)), storage).ok()?;
    if from.checked_add(count)? > view.len() {
        return None;
    }
    let start = out.len();
    grow(out, count.checked_mul(size_of::<E>())?)?;
    let dst: &mut [E] = bytemuck::try_cast_slice_mut(&mut out[start..]).ok()?;
    let mut at = 0;
    blocks(view, from, count, &mut |b| {
        let n = b.len();
        let d = ArrayViewMut::from_shape(b.raw_dim(), dst.get_mut(at..at + n)?).ok()?;
        copy(d, b);
        at += n;
        Some(())
    })
}

/// Calls `f` with sub-views of `v` that together hold its elements `from .. from + count` in C
/// order: a partial run of the first axis at each end (split further, recursively) and the
/// whole sub-arrays between them as one view. `from + count` is at most `v.len()`.
fn blocks<'a, A>(
    v: ArrayView<'a, A, IxDyn>,
    from: usize,
    count: usize,
    f: &mut impl FnMut(ArrayView<'a, A, IxDyn>) -> Option<()>,
) -> Option<()> {
    if count == 0 {
        return Some(());
    }
    if from == 0 && count == v.len() {
        return f(v);
    }
    let outer = *v.shape().first()?;
    let inner = v.len().checked_div(outer)?;
    let (mut i, skip) = (from / inner, from % inner);
    let mut left = count;
    if skip > 0 || left < inner {
        let take = left.min(inner - skip);
        blocks(v.clone().index_axis_move(Axis(0), i), skip, take, f)?;
        left -= take;
        i += 1;
    }
    let whole = left / inner;
    if whole > 0 {
        let mut w = v.clone();
        w.slice_axis_inplace(Axis(0), Slice::from(i..i + whole));
        f(w)?;
        i += whole;
        left -= whole * inner;
    }
    if left > 0 {
        blocks(v.index_axis_move(Axis(0), i), 0, left, f)?;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Places logical element `i` (a `u32`) at the offset the spec's formula names in a device
    /// buffer of `u32::MAX` (padding), then checks that `gather` gives `0, 1, …` back, that
    /// `scatter` rebuilds the buffer with zero padding, and that each row's real elements are
    /// exactly the prefix `real_in_row` names.
    fn check(view: &PaddedView, expected_offset: impl Fn(&[u64]) -> u64) {
        let shape = view.logical_shape.clone();
        let total: u64 = shape.iter().product();
        let device_len = (view.rows * view.row_len) as usize;
        let mut device = vec![u32::MAX; device_len];
        for li in 0..total {
            let mut rem = li;
            let mut idx = vec![0; shape.len()];
            for i in (0..shape.len()).rev() {
                idx[i] = rem % shape[i];
                rem /= shape[i];
            }
            let off = expected_offset(&idx) as usize;
            assert_eq!(device[off], u32::MAX, "two elements at {off}");
            device[off] = li as u32;
        }
        let bytes: Vec<u8> = device.iter().flat_map(|v| v.to_le_bytes()).collect();
        let want: Vec<u8> = (0..total as u32).flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(view.gather(&bytes, 4), Some(want.clone()));
        assert_eq!(view.gather(&bytes[..bytes.len() - 1], 4), None);
        let zero_padded: Vec<u8> = device
            .iter()
            .flat_map(|&v| if v == u32::MAX { 0 } else { v }.to_le_bytes())
            .collect();
        assert_eq!(view.scatter(&want, 4), Some(zero_padded));
        assert_eq!(view.scatter(&want[..want.len() - 1], 4), None);
        for row in 0..view.rows {
            let real = view.real_in_row(row);
            let at = (row * view.row_len) as usize;
            let cells = &device[at..at + view.row_len as usize];
            assert!(cells[..real as usize].iter().all(|&v| v != u32::MAX));
            assert!(cells[real as usize..].iter().all(|&v| v == u32::MAX));
        }
    }

    #[test]
    fn nc1hwc0_nchw() {
        let (n, c, h, w, c0) = (2u64, 20u64, 3u64, 2u64, 16u64);
        let c1 = 2;
        let v = PaddedView::new(
            Format::primary(Format::NC1HWC0),
            &[n, c1, h, w, c0],
            &[n, c, h, w],
        )
        .unwrap();
        check(&v, |i| {
            let (ni, ci, hi, wi) = (i[0], i[1], i[2], i[3]);
            ni * c1 * h * w * c0 + (ci / c0) * h * w * c0 + hi * w * c0 + wi * c0 + ci % c0
        });
    }

    #[test]
    fn nc1hwc0_nhwc_original_shape() {
        let v = PaddedView::new(
            Format::primary(Format::NC1HWC0),
            &[1, 2, 2, 3, 16],
            &[1, 2, 3, 17],
        )
        .unwrap();
        check(&v, |i| {
            let (ni, hi, wi, ci) = (i[0], i[1], i[2], i[3]);
            ni * 2 * 2 * 3 * 16 + (ci / 16) * 2 * 3 * 16 + hi * 3 * 16 + wi * 16 + ci % 16
        });
    }

    #[test]
    fn nc1hwc0_hwcn_original_shape_c_a_multiple_of_c0() {
        let (n, c, h, w) = (3u64, 32u64, 2u64, 1u64);
        let v = PaddedView::new(
            Format::primary(Format::NC1HWC0),
            &[n, 2, h, w, 16],
            &[h, w, c, n],
        )
        .unwrap();
        check(&v, |i| {
            let (hi, wi, ci, ni) = (i[0], i[1], i[2], i[3]);
            ni * 2 * h * w * 16 + (ci / 16) * h * w * 16 + hi * w * 16 + wi * 16 + ci % 16
        });
    }

    #[test]
    fn fractal_z() {
        let (n, c, h, w) = (18u64, 5u64, 2u64, 2u64);
        let (c0, n0) = (16u64, 16u64);
        let c1 = 1;
        let n1 = 2;
        let v = PaddedView::new(
            Format::primary(Format::FRACTAL_Z),
            &[c1 * h * w, n1, n0, c0],
            &[n, c, h, w],
        )
        .unwrap();
        check(&v, |i| {
            let (ni, ci, hi, wi) = (i[0], i[1], i[2], i[3]);
            ((ci / c0) * h * w + hi * w + wi) * (n1 * n0 * c0) + ni * c0 + ci % c0
        });
    }

    /// dump-data.md §6, grouped FRACTAL_Z: NCHW `(g·cout + n, c, h, w)` at
    /// `(g/e)·c1·H·W·cout_opt·K + (ci/K)·H·W·cout_opt·K + h·W·cout_opt·K + w·cout_opt·K + co·K +
    /// ci % K`, `ci = (g % e)·cin + c`, `co = (g % e)·cout + n`.
    fn grouped(groups: u64, cin: u64, cout: u64, h: u64, w: u64, k: u64) {
        let lcm = |a: u64, b: u64| lcm(a, b).unwrap();
        let e = (lcm(lcm(cin, k) / cin, lcm(cout, 16) / cout)).min(groups);
        let cin_opt = (e * cin).div_ceil(k) * k;
        let cout_opt = (e * cout).div_ceil(16) * 16;
        let c1 = cin_opt / k;
        let g1 = groups.div_ceil(e);
        let mut format = Format::primary(Format::FRACTAL_Z);
        format.sub = u16::try_from(groups).unwrap();
        let v = PaddedView::new(
            format,
            &[g1 * c1 * h * w, cout_opt / 16, 16, k],
            &[groups * cout, cin, h, w],
        )
        .unwrap_or_else(|| panic!("groups {groups} cin {cin} cout {cout} k {k}: a view"));
        check(&v, |i| {
            let (g, n, c, hi, wi) = (i[0] / cout, i[0] % cout, i[1], i[2], i[3]);
            let (ev, blk) = (g % e, g / e);
            let (ci, co) = (ev * cin + c, ev * cout + n);
            let hwk = h * w * cout_opt * k;
            blk * c1 * hwk
                + (ci / k) * hwk
                + hi * w * cout_opt * k
                + wi * cout_opt * k
                + co * k
                + ci % k
        });
    }

    #[test]
    fn fractal_z_with_groups() {
        // Depthwise (cin 1, cout 1), channels straddling a C0 block, several shared blocks, a
        // last block with fewer groups than e, C0 32 (int8).
        for (groups, cin, cout, h, w, k) in [
            (4, 1, 1, 3, 3, 16),
            (3, 5, 2, 1, 2, 16),
            (8, 3, 6, 2, 1, 16),
            (5, 6, 8, 1, 1, 16),
            (2, 20, 16, 1, 1, 16),
            (6, 4, 4, 2, 2, 32),
        ] {
            grouped(groups, cin, cout, h, w, k);
        }
        // Shapes that disagree: no view.
        let mut format = Format::primary(Format::FRACTAL_Z);
        format.sub = 4;
        assert!(PaddedView::new(format, &[1, 1, 16, 16], &[6, 1, 1, 1]).is_none());
        assert!(PaddedView::new(format, &[1, 1, 16, 16], &[4, 0, 1, 1]).is_none());
    }

    #[test]
    fn fractal_z_3d_dhwcn_with_c1_above_one() {
        // GE format_transfer_dhwcn_fractal_z_3D.cc:
        // dst = d·C1HWN1N0C0 + c1·HWN1N0C0 + h·WN1N0C0 + w·N1N0C0 + n·C0 + c0
        let (d, h, w, c, n) = (2u64, 2u64, 1u64, 20u64, 3u64);
        let (c0, n0, c1, n1) = (16u64, 16u64, 2u64, 1u64);
        let v = PaddedView::new(
            Format::primary(Format::FRACTAL_Z_3D),
            &[d * c1 * h * w, n1, n0, c0],
            &[d, h, w, c, n],
        )
        .unwrap();
        let nc = n1 * n0 * c0;
        check(&v, |i| {
            let (di, hi, wi, ci, ni) = (i[0], i[1], i[2], i[3], i[4]);
            di * c1 * h * w * nc
                + (ci / c0) * h * w * nc
                + hi * w * nc
                + wi * nc
                + ni * c0
                + ci % c0
        });
    }

    #[test]
    fn fractal_nz_batched() {
        let (b, r, cc) = (3u64, 17u64, 20u64);
        let (h0, w0) = (16u64, 16u64);
        let (w1, h1) = (2u64, 2u64);
        let v = PaddedView::new(
            Format::primary(Format::FRACTAL_NZ),
            &[b, w1, h1, h0, w0],
            &[b, r, cc],
        )
        .unwrap();
        let hp = h1 * h0;
        check(&v, |i| {
            let (bi, ri, ci) = (i[0], i[1], i[2]);
            bi * (w1 * hp * w0) + (ci / w0) * hp * w0 + ri * w0 + ci % w0
        });
    }

    #[test]
    fn fractal_nz_one_dim() {
        let v =
            PaddedView::new(Format::primary(Format::FRACTAL_NZ), &[2, 1, 16, 16], &[20]).unwrap();
        check(&v, |i| (i[0] / 16) * 16 * 16 + i[0] % 16);
    }

    #[test]
    fn ndc1hwc0() {
        let (n, c, d, h, w) = (1u64, 3u64, 2u64, 2u64, 1u64);
        let v = PaddedView::new(
            Format::primary(Format::NDC1HWC0),
            &[n, d, 1, h, w, 16],
            &[n, c, d, h, w],
        )
        .unwrap();
        check(&v, |i| {
            let (ni, ci, di, hi, wi) = (i[0], i[1], i[2], i[3], i[4]);
            ni * d * h * w * 16
                + di * h * w * 16
                + (ci / 16) * h * w * 16
                + hi * w * 16
                + wi * 16
                + ci % 16
        });
    }

    #[test]
    fn c1hwncoc0_diagonal() {
        // dump-data.md §6 and GE format_transfer_c1hwncoc0_hwcn.cc:
        // off = (c/C0)·H·W·N·Co·C0 + h·W·N·Co·C0 + w·N·Co·C0 + n·Co·C0 + (c%C0)·C0 + c%C0
        let (h, w, c, n, c0) = (2u64, 3u64, 5u64, 2u64, 4u64);
        let c1 = 2;
        let v = PaddedView::new(
            Format::primary(Format::C1HWNCOC0),
            &[c1, h, w, n, c0, c0],
            &[h, w, c, n],
        )
        .unwrap();
        let (ncc, cc) = (n * c0 * c0, c0 * c0);
        check(&v, |i| {
            let (hi, wi, ci, ni) = (i[0], i[1], i[2], i[3]);
            (ci / c0) * h * w * ncc + hi * w * ncc + wi * ncc + ni * cc + (ci % c0) * c0 + ci % c0
        });
        // Co must equal C0.
        assert!(PaddedView::new(
            Format::primary(Format::C1HWNCOC0),
            &[c1, h, w, n, 2, c0],
            &[h, w, c, n],
        )
        .is_none());
    }

    #[test]
    fn gather_restores_nchw_from_nc1hwc0_for_every_element_size() {
        // N=1, C=3, H=1, W=2 in NC1HWC0 with C0=4: device (1, 1, 1, 2, 4)
        let device: Vec<u8> = vec![0, 2, 4, 0, 1, 3, 5, 0];
        let v = PaddedView::new(
            Format::primary(Format::NC1HWC0),
            &[1, 1, 1, 2, 4],
            &[1, 3, 1, 2],
        )
        .unwrap();
        assert_eq!(v.gather(&device, 1), Some(vec![0, 1, 2, 3, 4, 5]));
        assert_eq!(v.gather(&device[..7], 1), None);
        for es in [2usize, 8, 16] {
            let wide: Vec<u8> = device
                .iter()
                .flat_map(|&b| std::iter::repeat_n(b, es))
                .collect();
            let want: Vec<u8> = (0..6u8).flat_map(|b| std::iter::repeat_n(b, es)).collect();
            assert_eq!(
                v.gather(&wide, es),
                Some(want.clone()),
                "{es}-byte elements"
            );
            assert_eq!(v.scatter(&want, es), Some(wide), "{es}-byte elements");
        }
        assert_eq!(v.gather(&[0; 24], 3), None);
    }

    #[test]
    fn no_view_when_shapes_disagree_or_no_padding() {
        assert!(PaddedView::new(
            Format::primary(Format::NC1HWC0),
            &[2, 2, 3, 2, 16],
            &[2, 40, 3, 2]
        )
        .is_none());
        assert!(PaddedView::new(Format::primary(Format::ND), &[4], &[4]).is_none());
        assert!(
            PaddedView::new(Format::primary(Format::FRACTAL_NZ), &[2, 1, 16, 16], &[]).is_none()
        );
        assert!(
            PaddedView::new(Format::primary(Format::FRACTAL_NZ), &[2, 0, 16, 16], &[3]).is_none()
        );
        // Shapes whose element counts overflow are refused, not allocated.
        let huge = u64::MAX / 2;
        assert!(PaddedView::new(
            Format::primary(Format::NC1HWC0),
            &[huge, 1, huge, 1, 16],
            &[huge, 3, huge, 1]
        )
        .is_none());
    }

    #[test]
    fn strided_views_come_back_in_logical_order() {
        // storage [0 1 2 3 4 5] as a 2x3 tensor, viewed transposed: 3x2 with stride (1, 3).
        let storage: Vec<u8> = (0..6).collect();
        assert_eq!(
            gather_strided(&storage, &[3, 2], &[1, 3], 1),
            Some(vec![0, 3, 1, 4, 2, 5])
        );
        assert_eq!(gather_strided(&storage, &[3, 2], &[1, 4], 1), None);
        // An expanded view (stride 0) repeats elements; a 0-d view is one element.
        assert_eq!(
            gather_strided(&storage, &[2, 3], &[0, 1], 1),
            Some(vec![0, 1, 2, 0, 1, 2])
        );
        assert_eq!(gather_strided(&storage[4..], &[], &[], 1), Some(vec![4]));
        assert_eq!(gather_strided(&storage, &[2, 0], &[1, 1], 1), Some(vec![]));
        assert_eq!(gather_strided(&storage, &[2], &[1, 1], 1), None);
        // An expanded view too big to hold is refused, not an aborted allocation.
        assert_eq!(
            gather_strided(&storage, &[1 << 40, 1 << 20], &[0, 0], 1),
            None
        );
    }

    #[test]
    fn strided_ranges_agree_with_the_whole_view() {
        // A (3, 4, 5) tensor of u16 stored as (5, 4, 3) and permuted: stride (1, 3, 12).
        let storage: Vec<u8> = (0..60u16).flat_map(|v| v.to_le_bytes()).collect();
        let (shape, stride) = ([3u64, 4, 5], [1u64, 3, 12]);
        let whole = gather_strided(&storage, &shape, &stride, 2).unwrap();
        let mut want = Vec::new();
        for i in 0..3u16 {
            for j in 0..4 {
                for k in 0..5 {
                    want.extend((i + 3 * j + 12 * k).to_le_bytes());
                }
            }
        }
        assert_eq!(whole, want);
        for from in 0..60u64 {
            for count in [0u64, 1, 4, 7, 23, 60 - from] {
                let count = count.min(60 - from);
                let mut out = vec![9u8];
                strided_range(&storage, &shape, &stride, 2, from, count, &mut out).unwrap();
                let (a, b) = (2 * from as usize, 2 * (from + count) as usize);
                assert_eq!(out[1..], whole[a..b], "from {from}, count {count}");
            }
        }
        let mut out = vec![9u8];
        assert_eq!(
            strided_range(&storage, &shape, &stride, 2, 59, 2, &mut out),
            None
        );
        assert_eq!(out, vec![9u8]);
    }
}
