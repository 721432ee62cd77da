//! Words of the shell commands npgx prints (remedies, next steps, HTML copy buttons).

/// `s` as one POSIX shell word: unchanged when every byte is safe unquoted, else single-quoted.
/// A string with a NUL byte, which no shell word can hold, is returned as it is.
pub fn word(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| s.to_string(), |q| q.into_owned())
}

#[cfg(test)]
mod tests {
    use super::word;

    #[test]
    fn quotes_what_the_shell_would_split_or_expand() {
        assert_eq!(word("logs/plog-1.log"), "logs/plog-1.log");
        assert_eq!(word("logs/run 1.log"), "'logs/run 1.log'");
        // Whatever the quoting, the shell reads back the one word it was given.
        for s in [
            "a'b",
            "$HOME",
            "",
            "x\"y`z`",
            "a b\tc\nd",
            "*.log",
            "op;rm -rf ~",
        ] {
            assert_eq!(shlex::split(&word(s)), Some(vec![s.to_string()]), "{s:?}");
        }
    }
}
