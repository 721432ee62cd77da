//! The `dump_path` constraint (adump `CheckDumpPath`): length, characters, an IPv4 prefix, and a
//! directory CANN can read and write.

use std::path::Path;

use super::{Checker, Val, MAX_DUMP_PATH_LENGTH};
use crate::config::cann;

impl Checker<'_> {
    pub(super) fn dump_path(&mut self) {
        const F: &str = "CheckDumpPath";
        let path = match self.val("dump_path") {
            Val::Bad => return,
            Val::Absent => {
                self.ep0001(
                    "dump_path",
                    F,
                    cann::NOT_FOUND,
                    "add \"dump_path\": \"/absolute/existing/dir\" to the \"dump\" object".into(),
                );
                return;
            }
            Val::Str("") => {
                self.ep0001(
                    "dump_path",
                    F,
                    cann::VALUE_EMPTY,
                    "set dump_path to an existing directory".into(),
                );
                return;
            }
            Val::Str(p) => p,
        };
        if path.len() > MAX_DUMP_PATH_LENGTH {
            self.ep0003(
                path,
                "dump_path",
                F,
                cann::PATH_TOO_LONG,
                format!(
                    "shorten dump_path to at most 512 characters (it has {})",
                    path.len()
                ),
            );
            return;
        }
        let remote = match path.find(':') {
            None => None,
            Some(colon) if colon + 1 == path.len() => {
                // adump reports this, then still treats the value as a local path.
                self.ep0003(
                    path,
                    "dump_path",
                    "CheckIpAddress",
                    cann::PATH_INVALID,
                    "write a remote dump path as IPv4:/path (nothing follows the colon), or drop the colon".into(),
                );
                None
            }
            Some(colon) => is_ipv4(&path[..colon]).then(|| &path[colon + 1..]),
        };
        if let Some(after) = remote {
            if !after.bytes().all(valid_dir_char) {
                self.ep0003(
                    after,
                    "dump_path",
                    F,
                    cann::INVALID_CHARS,
                    "use only letters, digits and -=[];\\,./!@#$%^&*()_+{}:? in the path after the IP address".into(),
                );
            }
            self.notes.push(format!(
                "dump_path is remote ({path}): only its syntax was checked"
            ));
            return;
        }
        if !self.options.filesystem {
            self.notes.push(
                "filesystem checks skipped (--no-fs-check): dump_path was not checked for existence, type or permissions; check again on the machine that will run the model".into(),
            );
            return;
        }
        self.filesystem_checked = true;
        if Path::new(path).is_relative() {
            self.notes.push(format!(
                "dump_path {path} is relative: it was checked against the current directory; CANN resolves it against the working directory of the process that runs the model"
            ));
        }
        match std::fs::canonicalize(path) {
            Err(_) => self.ep0003(
                path,
                "dump_path",
                F,
                cann::PATH_NOT_EXIST,
                format!("create it first (mkdir -p {path}): CANN does not create dump_path"),
            ),
            Ok(real) if !real.is_dir() => self.ep0003(
                path,
                "dump_path",
                F,
                cann::PATH_NOT_DIRECTORY,
                "point dump_path at a directory, not a file".into(),
            ),
            Ok(real) => {
                if !readable_and_writable(&real) {
                    self.ep0003(
                        path,
                        "dump_path",
                        F,
                        cann::PATH_NO_PERMISSION,
                        format!("give the user that runs the model read and write access (chmod u+rw {path}) or choose another directory"),
                    );
                }
            }
        }
    }
}

/// adump `CheckIpAddress`: four dot-separated parts, each read like `std::stoi` (optional
/// leading space and sign, then digits; trailing text ignored) within 0..=255.
fn is_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            let t = p.trim_start();
            let (neg, body) = match t.as_bytes().first() {
                Some(b'-') => (true, &t[1..]),
                Some(b'+') => (false, &t[1..]),
                _ => (false, t),
            };
            let digits: String = body.chars().take_while(char::is_ascii_digit).collect();
            match digits.parse::<i64>() {
                Ok(v) => {
                    let v = if neg { -v } else { v };
                    (0..=255).contains(&v)
                }
                Err(_) => false,
            }
        })
}

/// adump `FileUtils::IsValidDirChar`.
fn valid_dir_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-=[];\\,./!@#$%^&*()_+{}:?".contains(&c)
}

/// `access(path, R_OK | W_OK)` — asks the kernel, so ACLs, read-only mounts and root are all
/// handled as CANN sees them. Nothing is created or modified.
fn readable_and_writable(path: &Path) -> bool {
    use rustix::fs::Access;
    rustix::fs::access(path, Access::READ_OK | Access::WRITE_OK).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_like_stoi() {
        assert!(is_ipv4("127.0.0.1"));
        assert!(!is_ipv4("256.1.1.1"));
        assert!(!is_ipv4("127.0.0.1.1"));
        assert!(!is_ipv4("a.b.c.d"));
        assert!(is_ipv4("1.2.3.4x"));
    }

    /// The false branch for an existing directory needs an unprivileged user (root passes
    /// `access`): tests/it/dump_config.rs runs it.
    #[test]
    fn access_is_asked_of_the_kernel() {
        assert!(readable_and_writable(&std::env::temp_dir()));
        assert!(!readable_and_writable(Path::new("/no/such/dir/npgx")));
        assert!(!readable_and_writable(Path::new("dump\0path")));
    }
}
