//! Device formats with padding, seen as rows of real elements (`dump-data.md` §6).
//!
//! A padded device format stores a tensor in blocks whose innermost dimension (C0 or W0) is
//! padded with zeros. Read row by row — a row being one run of the innermost device dimension —
//! each row holds a prefix of real elements followed by padding, or nothing but padding. A
//! [`PaddedView`] answers "how many real elements does row `r` start with", which is all a
//! streaming reader needs to compute statistics over logical elements only, and
//! [`PaddedView::logical_index`] maps each real element to its position in the logical tensor for
//! conversion back to ND.
//!
//! C0, N0, H0 and W0 are taken from the device shape, never from the data type. The logical
//! shape is the header's `original_shape`, which may be in NCHW, NHWC or HWCN order (NCDHW,
//! NDHWC or DHWCN for 3-D formats): the order that agrees with the device shape is chosen. When
//! none agrees, or the format has no padding, there is no view and the device buffer is the data.

use super::format::Format;

/// Row geometry of a padded device layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaddedView {
    kind: Kind,
    /// Elements per row (the innermost device dimension).
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
        c: u64,
        c0: u64,
        c1: u64,
        d: u64,
        h: u64,
        w: u64,
        n1n0: u64,
    },
    /// `(batch…, W1, H1, H0, W0)` over logical `(batch…, R, Cc)`.
    FractalNz {
        r: u64,
        cc: u64,
        w0: u64,
        w1: u64,
        h1h0: u64,
    },
}

fn ceil_div(a: u64, b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
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
            Format::FRACTAL_Z_3D => Self::fractal_z(device, logical, true),
            Format::FRACTAL_NZ | Format::FRACTAL_NZ_C0_16 | Format::FRACTAL_NZ_C0_32 => {
                Self::fractal_nz(device, logical)
            }
            _ => None,
        }?;
        let (kind, axes) = view;
        let row_len = *device.last()?;
        let v = PaddedView {
            kind,
            row_len,
            rows: device_elements / row_len,
            logical_elements,
            logical_shape: logical.to_vec(),
            axes,
        };
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
            ok.then(|| {
                (
                    Kind::FractalZ {
                        n,
                        c,
                        c0,
                        c1,
                        d,
                        h,
                        w,
                        n1n0: n1 * n0,
                    },
                    *a,
                )
            })
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
                r,
                cc,
                w0,
                w1,
                h1h0: h1 * h0,
            },
            axes,
        ))
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
                c,
                c0,
                c1,
                h,
                w,
                n1n0,
                ..
            } => {
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
                h1h0,
            } => {
                if row % h1h0 >= r {
                    return 0;
                }
                let w1_i = (row / h1h0) % w1;
                cc.saturating_sub(w1_i * w0).min(w0)
            }
        }
    }

    /// The logical (C-order over `logical_shape`) index of the element at `(row, col)` of the
    /// device buffer, for `col < real_in_row(row)`.
    pub fn logical_index(&self, row: u64, col: u64) -> u64 {
        let s = &self.logical_shape;
        let mut idx = vec![0u64; s.len()];
        match self.kind {
            Kind::Nc1hwc0 {
                c0, c1, d, h, w, ..
            } => {
                // device (N, D, C1, H, W) row order
                let wi = row % w;
                let hi = (row / w) % h;
                let c1_i = (row / (w * h)) % c1;
                let di = (row / (w * h * c1)) % d;
                let ni = row / (w * h * c1 * d);
                idx[self.axes.n] = ni;
                idx[self.axes.c] = c1_i * c0 + col;
                idx[self.axes.h] = hi;
                idx[self.axes.w] = wi;
                if let Some(dx) = self.axes.d {
                    idx[dx] = di;
                }
            }
            Kind::FractalZ {
                c0, c1, h, w, n1n0, ..
            } => {
                let ni = row % n1n0;
                let outer = row / n1n0; // (d, c1, h, w)
                let wi = outer % w;
                let hi = (outer / w) % h;
                let c1_i = (outer / (w * h)) % c1;
                let di = outer / (w * h * c1);
                idx[self.axes.n] = ni;
                idx[self.axes.c] = c1_i * c0 + col;
                idx[self.axes.h] = hi;
                idx[self.axes.w] = wi;
                if let Some(dx) = self.axes.d {
                    idx[dx] = di;
                }
            }
            Kind::FractalNz { w0, w1, h1h0, .. } => {
                let ri = row % h1h0;
                let w1_i = (row / h1h0) % w1;
                let b = row / (h1h0 * w1);
                let k = s.len();
                idx[k - 1] = w1_i * w0 + col;
                if k >= 2 {
                    idx[k - 2] = ri;
                    // flat batch index over the leading dims
                    let mut rem = b;
                    for i in (0..k - 2).rev() {
                        idx[i] = rem % s[i];
                        rem /= s[i];
                    }
                }
            }
        }
        idx.iter()
            .zip(s)
            .fold(0u64, |acc, (&i, &dim)| acc * dim + i)
    }
}

impl PaddedView {
    /// Converts a device buffer of `elem_size`-byte elements back to the logical tensor in C
    /// order over [`PaddedView::logical_shape`], dropping the padding. `None` when `data` is
    /// shorter than the device layout.
    pub fn gather(&self, data: &[u8], elem_size: usize) -> Option<Vec<u8>> {
        let es = elem_size as u64;
        let needed = self.rows.checked_mul(self.row_len)?.checked_mul(es)?;
        if (data.len() as u64) < needed {
            return None;
        }
        let mut out = vec![0u8; usize::try_from(self.logical_elements.checked_mul(es)?).ok()?];
        for row in 0..self.rows {
            for col in 0..self.real_in_row(row) {
                let src = ((row * self.row_len + col) * es) as usize;
                let dst = (self.logical_index(row, col) * es) as usize;
                out.get_mut(dst..dst + elem_size)?
                    .copy_from_slice(data.get(src..src + elem_size)?);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute-force reference: place each logical element with the spec's offset formula and
    /// check the view finds exactly those offsets, in order, with the right logical index.
    fn check(view: &PaddedView, expected_offset: impl Fn(&[u64]) -> u64) {
        let shape = view.logical_shape.clone();
        let mut by_offset = std::collections::BTreeMap::new();
        let total: u64 = shape.iter().product();
        for li in 0..total {
            let mut rem = li;
            let mut idx = vec![0; shape.len()];
            for i in (0..shape.len()).rev() {
                idx[i] = rem % shape[i];
                rem /= shape[i];
            }
            by_offset.insert(expected_offset(&idx), li);
        }
        let mut found = Vec::new();
        for row in 0..view.rows {
            for col in 0..view.real_in_row(row) {
                found.push((row * view.row_len + col, view.logical_index(row, col)));
            }
        }
        let want: Vec<(u64, u64)> = by_offset.into_iter().collect();
        assert_eq!(found, want);
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
    fn gather_restores_nchw_from_nc1hwc0() {
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
    }
}
