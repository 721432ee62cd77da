//! Counting records per process: the counts of one process ([`Acc`]) and of every process of a
//! scan or a chunk ([`Processes`]), with the slots a repeated header prefix is counted in.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use npgx_parsers::cann_error::codes_in_bag;
use npgx_parsers::causal::{rank_plog_error, CauseRank};
use npgx_parsers::kv::KvBag;
use npgx_parsers::plog::content::parse_content;
use npgx_parsers::plog::record::{lossy_cow, TRUNCATION_LENGTH};
use npgx_parsers::plog::{Cached, Level, PlogHeader, PlogTime, CACHED_PREFIXES};

use super::document::RecordRef;

pub(super) struct Acc {
    pub(super) pid: i64,
    pub(super) pname: String,
    pub(super) files: Vec<usize>,
    pub(super) devices: BTreeSet<u64>,
    pub(super) records: u64,
    pub(super) cont: u64,
    pub(super) truncated: u64,
    pub(super) levels: Vec<(Level, u64)>,
    /// Few distinct modules per process: a vector beats hashing every record's module name.
    pub(super) modules: Vec<(String, u64)>,
    pub(super) codes: HashMap<String, u64>,
    pub(super) first_time: Option<PlogTime>,
    pub(super) last_time: Option<PlogTime>,
    pub(super) first_error: Option<(PlogTime, usize, u64, RecordRef)>,
    pub(super) first_causal: Option<(CauseRank, PlogTime, usize, u64, RecordRef)>,
    /// Per second: (errors, warnings).
    pub(super) timeline: BTreeMap<PlogTime, (u64, u64)>,
}

impl Acc {
    pub(super) fn new(pid: i64, pname: String) -> Acc {
        Acc {
            pid,
            pname,
            files: Vec::new(),
            devices: BTreeSet::new(),
            records: 0,
            cont: 0,
            truncated: 0,
            levels: Vec::new(),
            modules: Vec::new(),
            codes: HashMap::new(),
            first_time: None,
            last_time: None,
            first_error: None,
            first_causal: None,
            timeline: BTreeMap::new(),
        }
    }

    /// Adds the counts of `o` (the same process, read later in the scan) whose line numbers
    /// start after `offset` lines.
    pub(super) fn absorb(&mut self, o: Acc, offset: u64) {
        for f in o.files {
            if self.files.last() != Some(&f) {
                self.files.push(f);
            }
        }
        self.devices.extend(o.devices);
        self.records += o.records;
        self.cont += o.cont;
        self.truncated += o.truncated;
        for (level, n) in o.levels {
            match self.levels.iter_mut().find(|(l, _)| *l == level) {
                Some((_, m)) => *m += n,
                None => self.levels.push((level, n)),
            }
        }
        for (module, n) in o.modules {
            match self.modules.iter_mut().find(|(m, _)| *m == module) {
                Some((_, m)) => *m += n,
                None => self.modules.push((module, n)),
            }
        }
        for (code, n) in o.codes {
            *self.codes.entry(code).or_insert(0) += n;
        }
        self.first_time = self.first_time.into_iter().chain(o.first_time).min();
        self.last_time = self.last_time.into_iter().chain(o.last_time).max();
        if let Some((t, f, l, mut r)) = o.first_error {
            let l = l + offset;
            r.line = l;
            if self
                .first_error
                .as_ref()
                .is_none_or(|(t0, f0, l0, _)| (t, f, l) < (*t0, *f0, *l0))
            {
                self.first_error = Some((t, f, l, r));
            }
        }
        if let Some((k, t, f, l, mut r)) = o.first_causal {
            let l = l + offset;
            r.line = l;
            if self
                .first_causal
                .as_ref()
                .is_none_or(|(k0, t0, f0, l0, _)| (k, t, f, l) < (*k0, *t0, *f0, *l0))
            {
                self.first_causal = Some((k, t, f, l, r));
            }
        }
        for (second, (e, w)) in o.timeline {
            let (e0, w0) = self.timeline.entry(second).or_default();
            *e0 += e;
            *w0 += w;
        }
    }
}

/// Counts per process: one for the whole scan, and one per chunk of a file on the worker threads
/// (folded into the first in file order, [`Processes::absorb`]).
#[derive(Default)]
pub(super) struct Processes {
    pub(super) accs: Vec<Acc>,
    pub(super) by_pid: HashMap<i64, usize>,
    pub(super) last: Option<(i64, usize)>,
    /// Per entry of the chunk's [`HeaderCache`]: where records with that entry's prefix are
    /// counted, once one was.
    pub(super) repeat: [Option<Slots>; CACHED_PREFIXES],
}

/// Where a record is counted: its process, and the slots of its level and module there.
#[derive(Clone, Copy)]
pub(super) struct Slots {
    pub(super) process: usize,
    pub(super) level: usize,
    pub(super) module: usize,
}

/// How a header was read: at the start of its line (with where the [`HeaderCache`] kept its
/// prefix), or behind console prefixes, or parsed again later (a `--grep` match on a
/// continuation line).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Prefix {
    Direct(Cached),
    Peeled,
}

impl Processes {
    pub(super) fn index(&mut self, pid: i64, pname: impl FnOnce() -> String) -> usize {
        match self.last {
            Some((p, i)) if p == pid => i,
            _ => {
                let i = match self.by_pid.get(&pid) {
                    Some(&i) => i,
                    None => {
                        self.accs.push(Acc::new(pid, pname()));
                        self.by_pid.insert(pid, self.accs.len() - 1);
                        self.accs.len() - 1
                    }
                };
                self.last = Some((pid, i));
                i
            }
        }
    }

    /// A header was read: a prefix that replaced a cache entry voids that entry's slots.
    pub(super) fn note(&mut self, prefix: Prefix) {
        if let Prefix::Direct(Cached::New(k)) = prefix {
            self.repeat[k] = None;
        }
    }

    /// Counts one record that passed the filters; returns its process's index.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn count(
        &mut self,
        h: &PlogHeader<'_>,
        prefix: Prefix,
        rest: &[u8],
        line_len: usize,
        file: usize,
        path: &Path,
        line: u64,
        device: Option<u32>,
    ) -> usize {
        let entry = match prefix {
            Prefix::Direct(Cached::Hit(k) | Cached::New(k)) => Some(k),
            Prefix::Direct(Cached::Uncached) | Prefix::Peeled => None,
        };
        let reused = entry.and_then(|k| self.repeat[k]);
        let slots = match reused {
            Some(slots) => slots,
            None => {
                let process = self.index(h.pid, || h.pname().into_owned());
                let acc = &mut self.accs[process];
                if acc.files.last() != Some(&file) {
                    acc.files.push(file);
                }
                if let Some(d) = device {
                    acc.devices.insert(u64::from(d));
                }
                let level = match acc.levels.iter().position(|(l, _)| *l == h.level) {
                    Some(k) => k,
                    None => {
                        acc.levels.push((h.level, 0));
                        acc.levels.len() - 1
                    }
                };
                let module = match acc.modules.iter().position(|(m, _)| m == h.module) {
                    Some(k) => k,
                    None => {
                        acc.modules.push((h.module.to_owned(), 0));
                        acc.modules.len() - 1
                    }
                };
                Slots {
                    process,
                    level,
                    module,
                }
            }
        };
        if let Some(k) = entry {
            self.repeat[k] = Some(slots);
        }
        let idx = slots.process;
        let acc = &mut self.accs[idx];
        acc.records += 1;
        if line_len >= TRUNCATION_LENGTH {
            acc.truncated += 1;
        }
        acc.levels[slots.level].1 += 1;
        acc.modules[slots.module].1 += 1;
        if acc.first_time.is_none_or(|t| h.time < t) {
            acc.first_time = Some(h.time);
        }
        if acc.last_time.is_none_or(|t| h.time > t) {
            acc.last_time = Some(h.time);
        }
        if matches!(h.level, Level::Error | Level::Warning) {
            let second = PlogTime {
                milli: 0,
                micro: 0,
                ..h.time
            };
            let (e, w) = acc.timeline.entry(second).or_default();
            if h.level == Level::Error {
                *e += 1;
            } else {
                *w += 1;
            }
        }
        if h.level == Level::Error {
            let text = lossy_cow(rest);
            let content = parse_content(h.module, &text);
            let msg = content.message;
            let bag = KvBag::new(msg);
            for c in codes_in_bag(&bag) {
                *acc.codes.entry(c).or_insert(0) += 1;
            }
            if let Some(d) = bag.u64("device_id") {
                acc.devices.insert(d);
            }
            let rr = |rank| RecordRef {
                file: path.to_path_buf(),
                line,
                time: h.time,
                level: h.level,
                module: h.module.to_owned(),
                pid: h.pid,
                text: msg.to_owned(),
                rank,
            };
            if acc
                .first_error
                .as_ref()
                .is_none_or(|(t, f, l, _)| (h.time, file, line) < (*t, *f, *l))
            {
                acc.first_error = Some((h.time, file, line, rr(None)));
            }
            // No rank is better than a device fault: a record read after the process's first
            // one (by time, file and line) cannot take its place, and is not ranked (in a
            // crash's log, every ERROR record after the fault).
            let settled = acc.first_causal.as_ref().is_some_and(|(r, t, f, l, _)| {
                *r == CauseRank::DeviceFault && (h.time, file, line) >= (*t, *f, *l)
            });
            if !settled {
                let rank = rank_plog_error(h.module, msg);
                if acc
                    .first_causal
                    .as_ref()
                    .is_none_or(|(r, t, f, l, _)| (rank, h.time, file, line) < (*r, *t, *f, *l))
                {
                    acc.first_causal = Some((rank, h.time, file, line, rr(Some(rank))));
                }
            }
        }
        idx
    }

    /// Adds the counts of a later chunk whose line numbers start after `offset` lines; returns
    /// where each of its processes went.
    pub(super) fn absorb(&mut self, other: Processes, offset: u64) -> Vec<usize> {
        other
            .accs
            .into_iter()
            .map(|a| {
                let i = self.index(a.pid, || a.pname.clone());
                self.accs[i].absorb(a, offset);
                i
            })
            .collect()
    }
}
