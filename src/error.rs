//! Errors that carry what a caller outside the CLI needs to act on them: the path that could not
//! be read. The CLI prints them as text (`npgx: error: cannot read PATH: …`); the Python module
//! (`python/`) finds them in the error's chain and raises `FileNotFoundError`, `PermissionError` or
//! `npgx.Error` with its `path`.

use std::path::{Path, PathBuf};

/// The context of an error met reading `path` (opening, listing or reading it): "cannot read
/// PATH", with the cause (an [`std::io::Error`] mostly) as the next link of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CannotRead {
    pub path: PathBuf,
    /// What the path is to the command, where it says so ("the golden": "cannot read the golden
    /// PATH"; "GE graph": "cannot read GE graph PATH").
    pub role: Option<String>,
}

impl CannotRead {
    pub fn new(path: impl AsRef<Path>) -> CannotRead {
        CannotRead {
            path: path.as_ref().to_path_buf(),
            role: None,
        }
    }

    /// The path with its role in the command: "cannot read ROLE PATH".
    pub fn with_role(role: impl Into<String>, path: impl AsRef<Path>) -> CannotRead {
        CannotRead {
            role: Some(role.into()),
            ..CannotRead::new(path)
        }
    }
}

impl std::fmt::Display for CannotRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.role {
            Some(role) => write!(f, "cannot read {role} {}", self.path.display()),
            None => write!(f, "cannot read {}", self.path.display()),
        }
    }
}

/// The path an error names ([`CannotRead`], wherever it is in the chain) and the I/O error kind
/// under it, when the chain has one.
pub fn read_failure(err: &anyhow::Error) -> Option<(&Path, Option<std::io::ErrorKind>)> {
    let at = err.downcast_ref::<CannotRead>()?;
    let kind = err
        .chain()
        .find_map(|e| e.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    Some((at.path.as_path(), kind))
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;

    use super::*;

    #[test]
    fn the_path_and_the_io_kind_are_found_under_later_contexts() {
        let err = std::fs::metadata("/nonexistent/npgx")
            .with_context(|| CannotRead::new(Path::new("/nonexistent/npgx")))
            .context("scanning")
            .unwrap_err();
        assert!(
            format!("{err:#}").starts_with("scanning: cannot read /nonexistent/npgx: "),
            "{err:#}"
        );
        let (path, kind) = read_failure(&err).expect("a read failure");
        assert_eq!(path, Path::new("/nonexistent/npgx"));
        assert_eq!(kind, Some(std::io::ErrorKind::NotFound));
        assert!(read_failure(&anyhow::anyhow!("other")).is_none());
    }
}
