//! Runs the five step scripts in order, each in its own process group, with the step's
//! environment set on the child only.
//!
//! stdout and stderr of a step share one open file description, so `stdout_stderr.log` holds
//! the bytes in the order the child wrote them (Python is run unbuffered for the same reason).
//! A timeout or Ctrl-C stops the whole process group (SIGINT, then SIGTERM, then SIGKILL) and
//! everything collected so far is still written: markers, `first_failure.txt`, `warnings.txt`.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::compare::OUTPUTS_DIR;
use super::layout::{
    Convention, Step, DEBUG_DIR, EAGER_REPEAT_DIR, ENV_FILE, FIRST_FAILURE_FILE, LOGS_DIR,
    LOG_FILE, PLOG_DIR, SCRIPTS_DIR, SUCCESS_MARKER, WARNINGS_FILE,
};
use super::scripts::{self, ScriptPlan};

/// What `triage run` needs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub script: PathBuf,
    /// Launcher template with `{script}` (or `{SCRIPT}`); `None` → `python {script}`.
    pub template: Option<String>,
    /// Extra arguments appended to the command.
    pub args: Vec<String>,
    /// Directory under which `torch-npugraph-ex-triage-logs/` is created.
    pub out: PathBuf,
    /// `--call N`.
    pub call: Option<usize>,
    /// Per-step timeout.
    pub timeout: Option<Duration>,
    /// Wrap the callable to save outputs and timings (`--compare-outputs`).
    pub compare_outputs: bool,
    /// Steps 4 and 5 write npugraph_ex data dumps into their directories (`--dump-tensors`).
    pub dump_tensors: bool,
    /// The seed every step starts from.
    pub seed: u64,
}

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepEnd {
    Passed,
    Failed { exit_code: i32 },
    TimedOut { exit_code: i32, after_secs: u64 },
    Interrupted { exit_code: i32 },
}

impl StepEnd {
    /// The `status` name used in JSON (`timed_out`).
    pub fn status(self) -> &'static str {
        match self {
            StepEnd::Passed => "passed",
            StepEnd::Failed { .. } => "failed",
            StepEnd::TimedOut { .. } => "timed_out",
            StepEnd::Interrupted { .. } => "interrupted",
        }
    }

    /// The process's exit code, `None` when it passed (the JSON has no `exit_code` then).
    pub fn failed_code(self) -> Option<i32> {
        (self != StepEnd::Passed).then(|| self.exit_code())
    }

    pub fn exit_code(self) -> i32 {
        match self {
            StepEnd::Passed => 0,
            StepEnd::Failed { exit_code }
            | StepEnd::TimedOut { exit_code, .. }
            | StepEnd::Interrupted { exit_code } => exit_code,
        }
    }
}

/// One executed step.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRun {
    pub step: Step,
    pub command: String,
    pub end: StepEnd,
    pub seconds: f64,
}

/// The outcome of `triage run` before analysis.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunSummary {
    pub root: PathBuf,
    pub plan: ScriptPlan,
    pub steps: Vec<StepRun>,
    /// `--compare-outputs`, all five steps passed: step 1 again from the same seed
    /// (`step1-eager-repeat/`), the noise floor.
    pub eager_repeat: Option<StepRun>,
    pub interrupted: bool,
}

/// Live progress, pushed by the runner; the CLI renders it. `label` names the step or bisect
/// variant.
pub trait Progress {
    fn step_started(&mut self, label: &str, command: &str);
    /// Called about every 200 ms while the step runs: elapsed time, log size, last log line.
    fn step_tick(&mut self, label: &str, elapsed: Duration, log_bytes: u64, last_line: &str);
    fn step_finished(&mut self, label: &str, end: StepEnd, seconds: f64);
    /// A step whose script does not exist was skipped (`triage steps`, as run_triage.sh does).
    fn step_skipped(&mut self, label: &str, script: &Path);
}

/// Ctrl-C and SIGTERM set this flag; a running step's process group is then stopped. (The one
/// SIGINT/SIGTERM handler of npgx is [`crate::output`]'s, which removes unfinished files.)
pub fn interrupt_flag() -> anyhow::Result<Arc<AtomicBool>> {
    crate::output::interrupt_flag()
}

/// Finds `name` on PATH.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The default launcher: `python {script}`, or `python3 {script}` where there is no `python`.
pub fn default_template() -> String {
    if which("python").is_some() {
        "python {script}".into()
    } else {
        "python3 {script}".into()
    }
}

/// Substitutes the quoted script path into the template and appends the quoted extra arguments.
pub fn build_command(template: &str, script: &Path, args: &[String]) -> anyhow::Result<String> {
    let quoted = shlex::try_quote(&script.to_string_lossy())
        .context("the script path cannot be quoted for the shell")?
        .into_owned();
    if !template.contains("{script}") && !template.contains("{SCRIPT}") {
        bail!("--cmd template must contain {{script}}: {template}");
    }
    let mut cmd = template
        .replace("{script}", &quoted)
        .replace("{SCRIPT}", &quoted);
    for a in args {
        cmd.push(' ');
        cmd.push_str(&shlex::try_quote(a).context("an argument cannot be quoted")?);
    }
    Ok(cmd)
}

/// The interpreter behind the template: a `python*` first word, or the shebang of a launcher
/// script such as `torchrun`.
pub fn interpreter_of(template: &str) -> (String, String) {
    let words = shlex::split(template).unwrap_or_default();
    let first = words
        .iter()
        .find(|w| !w.contains('=') || w.starts_with('/'))
        .cloned()
        .unwrap_or_default();
    let base = Path::new(&first)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    if base.starts_with("python") {
        return (first, "first word of the command".into());
    }
    let resolved = if first.contains('/') {
        Some(PathBuf::from(&first))
    } else {
        which(&first)
    };
    if let Some(p) = resolved {
        if let Ok(mut f) = File::open(&p) {
            let mut head = [0u8; 256];
            let n = f.read(&mut head).unwrap_or(0);
            let head = String::from_utf8_lossy(&head[..n]);
            if let Some(line) = head.lines().next().and_then(|l| l.strip_prefix("#!")) {
                let mut parts = line.split_whitespace();
                let prog = parts.next().unwrap_or("");
                let interp = if prog.ends_with("/env") {
                    parts.next().unwrap_or("python3").to_string()
                } else {
                    prog.to_string()
                };
                if interp.contains("python") {
                    return (interp, format!("shebang of {}", p.display()));
                }
            }
        }
    }
    (
        "python3".into(),
        "fallback (the launcher is not a Python script)".into(),
    )
}

/// Versions, and the attributes of npugraph_ex's `CompilerConfig` (the `options` keys the
/// installed backend accepts: it rejects a key the config object has no attribute for).
const VERSION_PROBE: &str = r#"
import importlib, sys
print("python: " + sys.version.split()[0] + " (" + sys.executable + ")")
for name in ("torch", "torch_npu", "torchair", "npugraph_ex"):
    try:
        mod = importlib.import_module(name)
        print(name + ": " + str(getattr(mod, "__version__", "unknown version")))
    except BaseException as exc:
        print(name + ": not available (" + type(exc).__name__ + ")")
try:
    cfg = importlib.import_module("npugraph_ex").CompilerConfig()
    keys = (k for k in dir(cfg) if not k.startswith("__") and not callable(getattr(cfg, k)))
    print("npugraph_ex_options: " + ",".join(sorted(keys)))
except BaseException as exc:
    print("npugraph_ex_options: unknown (" + type(exc).__name__ + ")")
"#;

/// Environment variables worth recording, by prefix.
const ENV_PREFIXES: &[&str] = &[
    "ASCEND_",
    "TORCH_",
    "TORCHDYNAMO_",
    "TORCHINDUCTOR_",
    "HCCL_",
    "PYTORCH_",
    "NPU_",
    "TNG_",
    "CANN_",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "CUDA_VISIBLE_DEVICES",
];

fn cann_version_cfg() -> (String, Option<String>) {
    let mut candidates = Vec::new();
    for var in ["ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"] {
        if let Some(v) = std::env::var_os(var) {
            candidates.push(PathBuf::from(v).join("version.cfg"));
        }
    }
    candidates.push(PathBuf::from(
        "/usr/local/Ascend/ascend-toolkit/latest/version.cfg",
    ));
    for c in &candidates {
        if let Ok(text) = fs::read_to_string(c) {
            return (c.display().to_string(), Some(text));
        }
    }
    (
        candidates
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        None,
    )
}

/// Writes `env.txt`: versions from the interpreter that runs the steps, CANN `version.cfg`,
/// relevant environment variables, and what npgx sets per step under `convention`. `seed` is
/// the seed npgx's step scripts start from (`None` when the scripts are not npgx's).
pub fn write_env(
    root: &Path,
    template: &str,
    command_example: &str,
    seed: Option<u64>,
    convention: Convention,
) -> anyhow::Result<()> {
    let (interp, how) = interpreter_of(template);
    let mut out = String::new();
    out.push_str("# npgx triage environment\n");
    if let Some(seed) = seed {
        out.push_str(&format!("seed: {seed}\n"));
    }
    out.push_str(&format!("command_template: {template}\n"));
    out.push_str(&format!("command_step1: {command_example}\n"));
    out.push_str(&format!("interpreter: {interp} ({how})\n"));
    let probe = Command::new(&interp)
        .arg("-c")
        .arg(VERSION_PROBE)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    match probe {
        Ok(o) => out.push_str(&String::from_utf8_lossy(&o.stdout)),
        Err(e) => out.push_str(&format!("python: cannot run {interp}: {e}\n")),
    }
    let (where_, cfg) = cann_version_cfg();
    match cfg {
        Some(text) => {
            out.push_str(&format!("cann_version_cfg: {where_}\n"));
            for l in text.lines() {
                out.push_str(&format!("  {l}\n"));
            }
        }
        None => out.push_str(&format!("cann_version_cfg: not found ({where_})\n")),
    }
    out.push_str("# environment (relevant variables)\n");
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .collect();
    vars.sort();
    for (k, v) in vars {
        out.push_str(&format!("{k}={v}\n"));
    }
    out.push_str("# set by npgx on each step's process only\n");
    for step in [Step::Eager, Step::ForceEager] {
        let env = step.env(Path::new("<step dir>"), convention);
        let list: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let which = if step == Step::Eager {
            "steps 1-3"
        } else {
            "steps 4-5"
        };
        out.push_str(&format!("{which}: {}\n", list.join(" ")));
    }
    crate::output::write(&root.join(ENV_FILE), out.as_bytes())
}

/// `<YYYYMMDD-HHMMSS>-pid<PID>` in local time (the system time zone, `TZ` honoured), as
/// run_triage.sh names its run directories.
fn timestamp_dir() -> String {
    format!(
        "{}-pid{}",
        jiff::Zoned::now().strftime("%Y%m%d-%H%M%S"),
        std::process::id()
    )
}

/// Generates the scripts and runs the ladder. Stops at the first failing step. With
/// `--compare-outputs`, when all five steps passed, step 1 runs once more (the noise floor).
pub fn run(
    cfg: &RunConfig,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> anyhow::Result<RunSummary> {
    let original =
        fs::read(&cfg.script).with_context(|| crate::error::CannotRead::new(&cfg.script))?;
    let source = String::from_utf8(original.clone())
        .with_context(|| format!("{} is not UTF-8", cfg.script.display()))?;
    let opts = scripts::PlanOptions {
        call: cfg.call,
        capture: cfg.compare_outputs,
        dump_tensors: cfg.dump_tensors,
        seed: cfg.seed,
    };
    let plan = scripts::plan(&source, opts)
        .map_err(|e| anyhow::anyhow!("{}: {e}", cfg.script.display()))?;
    let template = cfg.template.clone().unwrap_or_else(default_template);
    build_command(&template, Path::new("x.py"), &[])?;

    let root = cfg.out.join(LOGS_DIR).join(timestamp_dir());
    fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
    let root = root.canonicalize().unwrap_or(root);
    scripts::write(&root, &original, &plan)?;

    let first_cmd = build_command(
        &template,
        &root.join(SCRIPTS_DIR).join(Step::Eager.script_name()),
        &cfg.args,
    )?;
    write_env(
        &root,
        &template,
        &first_cmd,
        Some(cfg.seed),
        Convention::Npgx,
    )?;

    let ladder = Ladder {
        root: &root,
        template: &template,
        args: &cfg.args,
        timeout: cfg.timeout,
        extra: Extra {
            capture: cfg.compare_outputs,
            dumps: cfg.dump_tensors,
            convention: Convention::Npgx,
        },
    };
    let LadderRun {
        steps,
        mut interrupted,
        ..
    } = run_ladder(&ladder, stop, progress)?;
    let mut eager_repeat = None;
    if cfg.compare_outputs && steps.len() == 5 && steps.iter().all(|s| s.end == StepEnd::Passed) {
        let script = root.join(SCRIPTS_DIR).join(Step::Eager.script_name());
        let dir = root.join(EAGER_REPEAT_DIR);
        let run = run_in(&ladder, Step::Eager, &script, &dir, stop, progress)?;
        interrupted = matches!(run.end, StepEnd::Interrupted { .. });
        eager_repeat = Some(run);
    }
    Ok(RunSummary {
        root,
        plan,
        steps,
        eager_repeat,
        interrupted,
    })
}

/// One pass down the ladder in a tree: the launcher, and what each step's process gets.
pub struct Ladder<'a> {
    /// The tree: `scripts/<step>.py` in, `<step>/`, `first_failure.txt`, `warnings.txt` out.
    pub root: &'a Path,
    /// Launcher template with `{script}` or `{SCRIPT}`.
    pub template: &'a str,
    /// Extra arguments appended to every command.
    pub args: &'a [String],
    /// Per-step timeout.
    pub timeout: Option<Duration>,
    pub extra: Extra,
}

/// What a pass down the ladder did.
#[derive(Debug, Clone)]
pub struct LadderRun {
    /// The steps that ran, in order; the last one is the first that did not pass, if any.
    pub steps: Vec<StepRun>,
    /// Steps whose script did not exist (run_triage.sh: skipped, not a failure).
    pub skipped: Vec<Step>,
    pub interrupted: bool,
}

/// Runs `root/scripts/<step>.py` for the five steps in order and stops at the first that does
/// not pass.
///
/// This is run_triage.sh's loop, which `triage run` shares: a step whose script is missing is
/// skipped (no directory, no warning); after each step that ran, `warnings.txt` gets a line for
/// a missing or empty log or plog directory; the first step that fails writes
/// `first_failure.txt` (`<step> exit_code=<n>`, and a `reason=` line after a timeout or an
/// interrupt) unless the tree already has one — run_triage.sh keeps an earlier run's record in a
/// reused tree, and so does this.
pub fn run_ladder(
    ladder: &Ladder<'_>,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> anyhow::Result<LadderRun> {
    let mut done = LadderRun {
        steps: Vec::new(),
        skipped: Vec::new(),
        interrupted: false,
    };
    for step in Step::ALL {
        let script = ladder.root.join(SCRIPTS_DIR).join(step.script_name());
        if !script.is_file() {
            progress.step_skipped(step.name(), &script);
            done.skipped.push(step);
            continue;
        }
        let dir = ladder.root.join(step.name());
        let run = run_in(ladder, step, &script, &dir, stop, progress)?;
        check_artifacts(ladder.root, step)?;
        let end = run.end;
        done.steps.push(run);
        if end == StepEnd::Passed {
            continue;
        }
        let mut text = format!("{} exit_code={}\n", step.name(), end.exit_code());
        match end {
            StepEnd::TimedOut { after_secs, .. } => {
                text.push_str(&format!("reason=timeout after {after_secs}s\n"))
            }
            StepEnd::Interrupted { .. } => text.push_str("reason=interrupted\n"),
            _ => {}
        }
        let p = ladder.root.join(FIRST_FAILURE_FILE);
        if !p.exists() {
            crate::output::write(&p, text.as_bytes())?;
        }
        done.interrupted = matches!(end, StepEnd::Interrupted { .. });
        break;
    }
    Ok(done)
}

/// Runs `script` as `step` in `dir` (created, with the step's environment, capture and dump
/// directories) and leaves `SUCCESS` there when it passed.
fn run_in(
    ladder: &Ladder<'_>,
    step: Step,
    script: &Path,
    dir: &Path,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> anyhow::Result<StepRun> {
    let command = build_command(ladder.template, script, ladder.args)?;
    let label = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| step.name().to_string());
    let (end, seconds) = run_process(
        &label,
        step,
        dir,
        &command,
        ladder.extra,
        ladder.timeout,
        stop,
        progress,
    )?;
    Ok(StepRun {
        step,
        command,
        end,
        seconds,
    })
}

/// What a step or variant process gets besides its step's environment.
#[derive(Debug, Clone, Copy)]
pub struct Extra {
    /// `NPGX_CAPTURE_DIR=<dir>/outputs`.
    pub capture: bool,
    /// `NPGX_DUMP_DIR=<dir>`.
    pub dumps: bool,
    /// Whose variables the step's environment holds ([`Step::env`]).
    pub convention: Convention,
}

/// Creates `dir` (with `ascend_plog/`, and `torch_compile_debug/` for steps 4–5), runs
/// `command` there with `like`'s environment, reports progress under `label`, and leaves
/// `SUCCESS` when it passed. Returns how it ended and its wall time.
#[allow(clippy::too_many_arguments)]
pub fn run_process(
    label: &str,
    like: Step,
    dir: &Path,
    command: &str,
    extra: Extra,
    timeout: Option<Duration>,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> anyhow::Result<(StepEnd, f64)> {
    fs::create_dir_all(dir.join(PLOG_DIR))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    if like.has_debug_dir() {
        fs::create_dir_all(dir.join(DEBUG_DIR))
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut env = like.env(dir, extra.convention);
    if extra.capture {
        env.push((
            "NPGX_CAPTURE_DIR".into(),
            dir.join(OUTPUTS_DIR).display().to_string(),
        ));
    }
    if extra.dumps {
        env.push((scripts::DUMP_DIR_ENV.into(), dir.display().to_string()));
    }
    progress.step_started(label, command);
    let (end, seconds) = run_step(label, dir, command, &env, timeout, stop, progress)?;
    progress.step_finished(label, end, seconds);
    if end == StepEnd::Passed {
        let marker = dir.join(SUCCESS_MARKER);
        File::create(&marker).with_context(|| format!("cannot write {}", marker.display()))?;
    }
    Ok((end, seconds))
}

/// Appends warnings for a missing/empty log or plog directory (spec run_triage.sh step 5).
fn check_artifacts(root: &Path, step: Step) -> anyhow::Result<()> {
    let dir = root.join(step.name());
    let mut lines = String::new();
    let log_len = fs::metadata(dir.join(LOG_FILE))
        .map(|m| m.len())
        .unwrap_or(0);
    if log_len == 0 {
        lines.push_str(&format!("{} {LOG_FILE} missing or empty\n", step.name()));
    }
    let plog_empty = fs::read_dir(dir.join(PLOG_DIR))
        .map(|mut d| d.next().is_none())
        .unwrap_or(true);
    if plog_empty {
        lines.push_str(&format!("{} {PLOG_DIR} missing or empty\n", step.name()));
    }
    if !lines.is_empty() {
        let p = root.join(WARNINGS_FILE);
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .with_context(|| format!("cannot write {}", p.display()))?;
        f.write_all(lines.as_bytes())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}

fn status_code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

fn signal_group(child: &Child, sig: i32) {
    let Ok(pgid) = i32::try_from(child.id()) else {
        return;
    };
    // SAFETY: kill(2) with a negative pid signals the process group we created for the child.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

/// Stops the child's process group: SIGINT, SIGTERM, SIGKILL, with a grace period each.
fn stop_group(child: &mut Child) -> Option<ExitStatus> {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        signal_group(child, sig);
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(st)) = child.try_wait() {
                // Reap stragglers of the group that outlived the leader.
                signal_group(child, libc::SIGKILL);
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    child.wait().ok()
}

/// The last non-empty line of the log (read from its last 4 KiB).
fn last_line(log: &mut File) -> (u64, String) {
    let len = log.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(4096);
    let mut buf = Vec::new();
    if log.seek(SeekFrom::Start(from)).is_ok() {
        let _ = log.take(4096).read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf);
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string();
    (len, line)
}

/// Runs one step from npgx's working directory (so the user's relative paths still work).
fn run_step(
    label: &str,
    dir: &Path,
    command: &str,
    env: &[(String, String)],
    timeout: Option<Duration>,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> anyhow::Result<(StepEnd, f64)> {
    let log_path = dir.join(LOG_FILE);
    let log =
        File::create(&log_path).with_context(|| format!("cannot create {}", log_path.display()))?;
    let err = log
        .try_clone()
        .with_context(|| format!("cannot share {}", log_path.display()))?;
    let shell = if which("bash").is_some() {
        "bash"
    } else {
        "sh"
    };
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err))
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {shell} for {label}"))?;
    let mut reader =
        File::open(&log_path).with_context(|| crate::error::CannotRead::new(&log_path))?;
    let end = loop {
        if let Some(st) = child.try_wait().context("cannot wait for the step")? {
            let code = status_code(st);
            break if code == 0 {
                StepEnd::Passed
            } else {
                StepEnd::Failed { exit_code: code }
            };
        }
        if stop.load(Ordering::Relaxed) {
            stop_group(&mut child);
            break StepEnd::Interrupted { exit_code: 130 };
        }
        if let Some(t) = timeout {
            if started.elapsed() >= t {
                stop_group(&mut child);
                break StepEnd::TimedOut {
                    exit_code: 124,
                    after_secs: t.as_secs(),
                };
            }
        }
        let (bytes, line) = last_line(&mut reader);
        progress.step_tick(label, started.elapsed(), bytes, &line);
        std::thread::sleep(Duration::from_millis(200));
    };
    Ok((end, started.elapsed().as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_template() {
        let c = build_command(
            "torchrun --nproc_per_node=8 {script} --cfg x",
            Path::new("/t/a b/step1-eager.py"),
            &["--n".into(), "it's".into()],
        )
        .unwrap();
        // Any correct shell quoting will do: the shell must read back exactly these words.
        assert_eq!(
            shlex::split(&c).unwrap(),
            [
                "torchrun",
                "--nproc_per_node=8",
                "/t/a b/step1-eager.py",
                "--cfg",
                "x",
                "--n",
                "it's"
            ]
        );
        assert_eq!(
            build_command("python {SCRIPT}", Path::new("/s.py"), &[]).unwrap(),
            "python /s.py"
        );
        assert!(build_command("python main.py", Path::new("/s.py"), &[]).is_err());
    }

    #[test]
    fn interpreter_from_python_first_word() {
        assert_eq!(
            interpreter_of("/opt/venv/bin/python3 {script}").0,
            "/opt/venv/bin/python3"
        );
        assert_eq!(interpreter_of("python -m pkg.mod {script}").0, "python");
    }
}
