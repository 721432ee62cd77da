//! `mapping.csv`: how hashed dump file names map back to their real names (`dump-data.md` §1.6).
//!
//! ```text
//! line : {decimal hash},{original file name or full path}
//! ```
//!
//! No header line. The writer appends one line per hashed file, so a name may repeat; the last
//! line wins. Only the part after the last `/` of the original is the file name.

/// Parses `mapping.csv` into `(hash, original file name)` pairs, skipping malformed lines.
pub fn parse(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (hash, original) = l.trim_end_matches('\r').split_once(',')?;
            let hash = hash.trim();
            let name = original.trim().rsplit('/').next()?.to_string();
            (!hash.is_empty() && hash.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty())
                .then(|| (hash.to_string(), name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_lines_and_strips_directories() {
        let m = super::parse(
            "123,/dump/0/m/1/0/Add.Add_1.3.2.1700000000123456\n456,Mul.Mul.1.1.1\nbad line\n,x\n",
        );
        assert_eq!(
            m,
            vec![
                (
                    "123".to_string(),
                    "Add.Add_1.3.2.1700000000123456".to_string()
                ),
                ("456".to_string(), "Mul.Mul.1.1.1".to_string())
            ]
        );
    }
}
