//! Plog file names and folder layouts, as pure functions over path strings (spec §1.6).
//!
//! ```text
//! «root»/{debug,run,security}/plog/plog-«pid»_«YYYYMMDDhhmmssmmm».log        host plog
//! «root»/{debug,run}/device-«dev»/device-«pid»_«ts».log                     device app log (pulled)
//! …/dev-os-«n»/…/device-«dev»/device-«dev»_«ts».log  or …/firmware/…          device firmware log
//! …/device-app-«pid»/device-app-«pid»_«ts».log                               device app log (asys)
//! …/device-os/device-os_«ts».log                                             device system log
//! …/event/event_«ts».log                                                     event log
//! «root»/plog/plog_«ts».log                                                  old (2020) host plog
//! ```
//!
//! Rotation: one process writes several files with increasing 17-digit timestamps in the name;
//! [`LogFile::rotation_key`] orders them (sort, then read in that order).

use serde::{Deserialize, Serialize};

/// What a log file is, from its name and folders.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LogFileKind {
    /// `plog-«pid»_«ts».log` (or the old `plog_«ts».log`).
    HostPlog,
    /// `device-«pid»_«ts».log` under `device-«dev»/`, or `device-app-«pid»_«ts».log`.
    DeviceApp,
    /// `device-«dev»_«ts».log` under `dev-os-«n»/` or `firmware/`.
    DeviceFirmware,
    /// `device-os_«ts».log`.
    DeviceOs,
    /// `event_«ts».log`.
    Event,
}

/// The log folder a file sits in (`debug`, `run`, `security`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LogType {
    Debug,
    Run,
    Security,
}

/// Facts a path tells about a log file. Absent fields are not in the path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LogFile {
    pub kind: LogFileKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_type: Option<LogType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_id: Option<u32>,
    /// The 17-digit `YYYYMMDDhhmmssmmm` creation stamp in the name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stamp: Option<u64>,
}

impl LogFile {
    /// Sort key that puts the rotated files of one process in writing order.
    pub fn rotation_key(&self) -> (LogFileKind, Option<u32>, Option<u64>, Option<u64>) {
        (self.kind, self.device_id, self.pid, self.stamp)
    }
}

/// Classifies a path (`/` or `\` separated). Returns `None` for files that are not CANN logs
/// by name (`history.log`, `README.md`, a renamed copy).
///
/// ```
/// use npgx_parsers::plog::path::{classify, LogFileKind, LogType};
/// let f = classify("x/debug/plog/plog-155320_20250508095618528.log").unwrap();
/// assert_eq!((f.kind, f.log_type, f.pid, f.stamp), (LogFileKind::HostPlog, Some(LogType::Debug), Some(155320), Some(20250508095618528)));
/// let f = classify("slog/device-0/device-10043_20210331185942505.log").unwrap();
/// assert_eq!((f.kind, f.pid, f.device_id), (LogFileKind::DeviceApp, Some(10043), Some(0)));
/// let f = classify("slog/dev-os-0/device-0/device-0_20201224011054112.log").unwrap();
/// assert_eq!((f.kind, f.pid, f.device_id), (LogFileKind::DeviceFirmware, None, Some(0)));
/// ```
pub fn classify(path: &str) -> Option<LogFile> {
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    let (name, dirs) = parts.split_last()?;
    let stem = name.strip_suffix(".log")?;
    let log_type = dirs.iter().rev().find_map(|d| match *d {
        "debug" => Some(LogType::Debug),
        "run" => Some(LogType::Run),
        "security" => Some(LogType::Security),
        _ => None,
    });
    let folder_dev = dirs.iter().rev().find_map(|d| {
        d.strip_prefix("device-")
            .and_then(|n| n.parse::<u32>().ok())
    });
    let firmware = dirs
        .iter()
        .any(|d| d.starts_with("dev-os-") || *d == "firmware");
    let mut f = LogFile {
        kind: LogFileKind::HostPlog,
        log_type,
        pid: None,
        device_id: None,
        stamp: None,
    };
    if let Some(r) = stem.strip_prefix("plog-") {
        let (pid, ts) = id_stamp(r)?;
        f.pid = Some(pid);
        f.stamp = Some(ts);
    } else if let Some(r) = stem.strip_prefix("plog_") {
        f.stamp = Some(stamp(r)?);
    } else if let Some(r) = stem.strip_prefix("device-app-") {
        let (pid, ts) = id_stamp(r)?;
        f.kind = LogFileKind::DeviceApp;
        f.pid = Some(pid);
        f.stamp = Some(ts);
        f.device_id = dirs
            .iter()
            .rev()
            .find_map(|d| d.strip_prefix("dev-os-").and_then(|n| n.parse().ok()));
    } else if let Some(r) = stem.strip_prefix("device-os_") {
        f.kind = LogFileKind::DeviceOs;
        f.stamp = Some(stamp(r)?);
        f.device_id = dirs
            .iter()
            .rev()
            .find_map(|d| d.strip_prefix("dev-os-").and_then(|n| n.parse().ok()));
    } else if let Some(r) = stem.strip_prefix("device-") {
        let (id, ts) = id_stamp(r)?;
        f.stamp = Some(ts);
        if firmware {
            f.kind = LogFileKind::DeviceFirmware;
            f.device_id = u32::try_from(id).ok();
        } else {
            f.kind = LogFileKind::DeviceApp;
            f.pid = Some(id);
            f.device_id = folder_dev;
        }
    } else if let Some(r) = stem.strip_prefix("event_") {
        f.kind = LogFileKind::Event;
        f.stamp = Some(stamp(r)?);
    } else {
        return None;
    }
    Some(f)
}

fn id_stamp(s: &str) -> Option<(u64, u64)> {
    let (id, ts) = s.split_once('_')?;
    if id.is_empty() || id.len() > 10 || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((id.parse().ok()?, stamp(ts)?))
}

fn stamp(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let c = |p: &str| classify(p).map(|f| f.kind);
        assert_eq!(
            c("a/run/plog/plog-370_20230713074109952.log"),
            Some(LogFileKind::HostPlog)
        );
        assert_eq!(
            c("slog/plog/plog_20201224011051563.log"),
            Some(LogFileKind::HostPlog)
        );
        assert_eq!(
            c("dev-os-0/application/run/device-app-94868/device-app-94868_20250508070714766.log"),
            Some(LogFileKind::DeviceApp)
        );
        assert_eq!(
            c("dev-os-0/firmware/debug/device-0/device-0_20250507195454620.log"),
            Some(LogFileKind::DeviceFirmware)
        );
        assert_eq!(
            c("slog/dev-os-0/device-os/device-os_19700101080014782.log"),
            Some(LogFileKind::DeviceOs)
        );
        assert_eq!(
            c("run/event/event_20250101000000000.log"),
            Some(LogFileKind::Event)
        );
        assert_eq!(c("hisi_logs/device-0/history.log"), None);
        assert_eq!(c("plog/invalid-tiling-test.log"), None);
        assert_eq!(c("plog-x_1.log"), None);
        assert_eq!(c(""), None);
    }

    #[test]
    fn rotation_order() {
        let mut v: Vec<LogFile> = [
            "d/plog/plog-7_20250101000000200.log",
            "d/plog/plog-7_20250101000000100.log",
        ]
        .iter()
        .filter_map(|p| classify(p))
        .collect();
        v.sort_by_key(LogFile::rotation_key);
        assert_eq!(v[0].stamp, Some(20250101000000100));
    }
}
