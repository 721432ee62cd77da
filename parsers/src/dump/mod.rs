//! CANN operator dumps: binary dump files (v2, v1, TLV), their names, the directory trees they
//! live in, statistics CSVs, `mapping.csv`, Opdebug overflow payloads and the `data.pkl` of
//! npugraph_ex `.pt` archives.
//!
//! The byte-level reference is `dump-data.md` in the shared specs; each module quotes the part it
//! implements.

pub mod dtype;
pub mod format;
pub mod header;
pub mod layout;
pub mod mapping;
pub mod name;
pub mod opdebug;
pub mod path;
pub mod proto;
pub mod pt;
pub mod scalar;
pub mod stats_csv;

/// Entry points for fuzzing: each takes arbitrary bytes and must never panic. Not part of the
/// crate's API: built for `cargo fuzz` (`--cfg fuzzing`) and for the unit tests.
#[cfg(any(fuzzing, test))]
pub mod fuzz {
    use super::*;

    /// Runs every dump decoder on `data` as if it were a file's contents or name.
    pub fn all(data: &[u8]) {
        let _ = header::probe(data, data.len() as u64);
        let _ = header::decode_v2(data);
        let _ = header::decode_tlv(data);
        let _ = header::decode_v1(data, 0);
        let _ = opdebug::parse(data);
        let text = String::from_utf8_lossy(data);
        let _ = name::classify(&text);
        let _ = stats_csv::parse(&text);
        let _ = mapping::parse(&text);
        let dirs: Vec<&str> = text.split('/').collect();
        let _ = path::locate(&dirs);
        layout_view(data);
    }

    /// Builds a padded view and a strided view from shapes taken from `data`, walks a few rows
    /// of the first and converts both ways.
    pub fn layout_view(data: &[u8]) {
        let mut dims = data.iter().map(|&b| u64::from(b % 40));
        let fmt = format::Format::primary(dims.next().unwrap_or(0) as u8);
        let nd = dims.next().unwrap_or(0) as usize % 7;
        let device: Vec<u64> = dims.by_ref().take(nd).collect();
        let nl = dims.next().unwrap_or(0) as usize % 6;
        let logical: Vec<u64> = dims.by_ref().take(nl).collect();
        let es = 1usize << (dims.next().unwrap_or(0) % 5);
        if let Some(v) = layout::PaddedView::new(fmt, &device, &logical) {
            for row in 0..v.rows.min(64) {
                let _ = v.real_in_row(row);
            }
            let _ = v.gather(data, es);
            let _ = v.scatter(data, es);
        }
        let from = dims.next().unwrap_or(0);
        let count = dims.next().unwrap_or(0);
        let _ = layout::gather_strided(data, &device, &logical, es);
        let mut out = Vec::new();
        let _ = layout::strided_range(data, &logical, &device, es, from, count, &mut out);
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn garbage_never_panics() {
            let mut seed = 0x9E37_79B9u32;
            for len in 0..2000 {
                let bytes: Vec<u8> = (0..len % 300)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 17;
                        seed ^= seed << 5;
                        (seed >> 8) as u8
                    })
                    .collect();
                super::all(&bytes);
            }
        }
    }
}
