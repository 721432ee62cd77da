//! What a run prints about its numbers and where it computes them: a training metric logged as
//! `nan` or `inf` ([`nan_metric`]), a float16 value at float16's largest magnitude
//! ([`saturated_half`]) — accuracy evidence —; an operator that falls back to the CPU
//! ([`cpu_fallback`]) and model weights left in host memory ([`host_weights`]) — performance
//! evidence —; a speed or a latency it measures ([`speed_rates`], [`serving_metric`]); generated
//! text that degenerates into repetition ([`degenerate_text`]) and a loss that jumps a
//! hundredfold ([`loss_spike`]) — accuracy evidence. Read by the router in a text without an
//! error.

use std::collections::HashMap;

/// Names of the training metrics whose `nan` / `inf` says the numbers went wrong (lower case,
/// matched inside the metric's key): losses and gradient norms, as trainers log them — the
/// Hugging Face Trainer's dicts (`{'loss': nan, 'grad_norm': nan, …}`, also LLaMA-Factory and
/// ms-swift), Megatron-LM / MindSpeed iteration lines (`lm loss: …`, `grad norm: nan`), and
/// `key=value` loggers.
const NAN_METRICS: &[&str] = &[
    "loss",
    "grad_norm",
    "grad norm",
    "grad-norm",
    "gradnorm",
    "gnorm",
];

/// The metric (`grad_norm`) a training log line reports as `nan` or `inf`, or Megatron's own
/// count of such iterations (`number of nan iterations: 3`), or its loss check (`found NaN in
/// local forward loss calculation`).
pub fn nan_metric(line: &str) -> Option<String> {
    // Ray and vLLM put their process labels in front of a metric record.
    let l = crate::line_prefix::strip_prefixes(line)
        .rest
        .to_ascii_lowercase();
    let b = l.as_bytes();
    for value in ["nan", "inf"] {
        for (at, _) in l.match_indices(value) {
            let end = at + value.len();
            let starts = at == 0 || !b[at - 1].is_ascii_alphanumeric();
            let ends = end >= b.len() || !b[end].is_ascii_alphanumeric();
            // `grad_norm = inf?`: a question about the value, not the value printed.
            let asked = l[end..].starts_with(['?', '？']);
            if !(starts && ends) || asked {
                continue;
            }
            // Back over `-`, quotes and spaces to the `:` or `=` before the value.
            let head = l[..at].trim_end_matches(['-', '\'', '"', ' ']);
            let Some(head) = head.strip_suffix([':', '=']) else {
                continue;
            };
            let key_end = head.trim_end_matches(['\'', '"', ' ']);
            let key: String = key_end
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | '/'))
                .take(40)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let key = key.trim();
            // A metric record of its own — one `key:value` per line, or one ` - `-separated
            // segment of verl's `step:1 - actor/entropy:0.8 - …` — whose value is `nan` names a
            // metric whatever its name; otherwise only a loss or a gradient norm does (an `inf`
            // alone may be a limit: `max_time: inf`).
            let segment_start = l[..at].rfind(" - ").map_or(0, |p| p + 3);
            let segment_end = l[end..].find(" - ").map_or(l.len(), |p| end + p);
            let segment_key = l[segment_start..at]
                .trim_end_matches([':', '=', ' ', '\'', '"'])
                .trim();
            let alone = value == "nan"
                && !segment_key.is_empty()
                && !segment_key.contains(char::is_whitespace)
                && l[end..segment_end].trim().is_empty();
            if alone {
                return Some(format!("{segment_key}: {value}"));
            }
            if NAN_METRICS.iter().any(|m| key.contains(m)) {
                return Some(format!("{key}: {value}"));
            }
        }
    }
    if let Some(at) = l.find("number of nan iterations:") {
        let n: String = l[at + 25..]
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if n.parse::<u64>().is_ok_and(|n| n > 0) {
            return Some(format!("number of nan iterations: {n}"));
        }
    }
    for found in ["found nan in", "found inf in"] {
        if l.contains(found) {
            return Some(found.to_string());
        }
    }
    None
}

/// A printed tensor or array whose values are all zero, three at least (`tensor([0., 0., 0.,
/// ..., 0., 0., 0.], device='npu:0')`, `array([0, 0, 0], dtype=int32)`, numpy's `[0. 0. 0.]`):
/// the line that shows an output of zeros. Only the line's own brackets are read: a value
/// outside them (`device='npu:0'`) or a line that starts with words is none.
pub fn zero_values(line: &str) -> bool {
    let t = line.trim();
    let body = ["tensor(", "array("]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .unwrap_or(t);
    // The whole tensor on the line: its brackets closed, not a row that more rows follow.
    let opened = body.matches('[').count();
    if !body.starts_with('[') || opened != body.matches(']').count() || t.ends_with(',') {
        return false;
    }
    let inner = &body[..body.rfind(']').map_or(body.len(), |e| e + 1)];
    let mut zeros = 0;
    for v in inner.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']')) {
        if v.is_empty() || v == "..." {
            continue;
        }
        match v.trim_end_matches('.').parse::<f64>() {
            Ok(0.0) => zeros += 1,
            _ => return false,
        }
    }
    zeros >= 3
}

/// A tensor or array of zeros that starts at `lines[k]` ([`zero_values`]): on that line, or over
/// the lines until its brackets close — torch prints a matrix a row per line (`tensor([[0., 0.],`
/// … `[0., 0.]])`), numpy too (`[[0. 0.]` … ` [0. 0.]]`) — at most 64 lines: the index of its last
/// line. A line inside such a block (a row, indented) starts none.
pub fn zero_block(lines: &[&str], k: usize) -> Option<usize> {
    let first = lines.get(k)?;
    let t = first.trim_start();
    if !(t.starts_with("tensor(") || t.starts_with("array(") || first.starts_with('[')) {
        return None;
    }
    let mut text = String::new();
    let mut depth = 0i64;
    for (j, l) in lines.iter().enumerate().skip(k).take(64) {
        text.push_str(l.trim());
        text.push(' ');
        depth += l.matches('[').count() as i64 - l.matches(']').count() as i64;
        if depth <= 0 {
            return zero_values(text.trim_end()).then_some(j);
        }
    }
    None
}

/// float16's largest finite magnitude.
pub const HALF_MAX: f64 = 65504.0;

/// The training losses a line logs (`loss: 8712.5938`, `'loss': 2.31`, `lm loss: 1.2E+01`,
/// `aux loss: 0.001`, `loss=0.7`), each with its key — the words before `loss` back to the
/// previous field (`lm`, `aux`; empty for the loss itself), so that one loss is compared with
/// itself only: `loss` as a word of its own — not a component's (`pg_loss`, `actor/pg_loss`: an
/// RL objective may rise or fall by orders of magnitude) nor a setting's (`loss_scale`, `loss
/// scale`) — then `:` or `=` and a number, not a percentage (`packet loss: 0.0%`).
fn loss_values(line: &str) -> Vec<(String, f64)> {
    let l = line.to_ascii_lowercase();
    let b = l.as_bytes();
    l.match_indices("loss")
        .filter_map(|(at, _)| {
            let own = at
                .checked_sub(1)
                .is_none_or(|k| !(b[k].is_ascii_alphanumeric() || matches!(b[k], b'_' | b'/')));
            if !own {
                return None;
            }
            let value = l[at + 4..]
                .trim_start_matches(['\'', '"', ' '])
                .strip_prefix([':', '='])?
                .trim_start_matches([' ', '\'', '"']);
            let end = value
                .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')))
                .unwrap_or(value.len());
            if value[end..].trim_start().starts_with('%') {
                return None;
            }
            let v = value[..end].parse::<f64>().ok().filter(|v| v.is_finite())?;
            let key = l[..at]
                .rsplit([',', ';', '|', '{', '(', '\t'])
                .next()
                .unwrap_or("")
                .trim_matches([' ', '\'', '"']);
            Some((key.to_string(), v))
        })
        .collect()
}

/// The line (index into `lines`) where a training log's loss jumps a hundredfold or more above
/// the smallest value the same loss logged before (two values before it at least, none of them
/// zero) and ten times above its first value, to 1 or more: training diverged — an overflow in a
/// low-precision computation, a learning rate too high, a bad batch (`loss: 8.8465` then `loss:
/// 8712.5938`); a second run pasted after a first one that converged starts near the first
/// one's start and is none. Each loss is compared with itself (`aux loss` apart from `lm loss`).
/// The line, the smallest value and the jump.
pub fn loss_spike(lines: &[&str]) -> Option<(usize, f64, f64)> {
    // Per key: its first value, its smallest, how many were seen.
    let mut seen: Vec<(String, f64, f64, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for (key, v) in loss_values(line) {
            if v <= 0.0 {
                continue;
            }
            match seen.iter_mut().find(|(k, ..)| *k == key) {
                Some((_, first, low, n)) => {
                    if *n >= 2 && v >= 1.0 && v >= *low * 100.0 && v >= *first * 10.0 {
                        return Some((i, *low, v));
                    }
                    *low = low.min(v);
                    *n += 1;
                }
                None => seen.push((key, v, v, 1)),
            }
        }
    }
    None
}

/// Whether line `i` of `lines` prints a float16 tensor holding ±65504, float16's largest
/// finite value: the value inside a printed tensor (torch's `tensor(…)`, numpy's `array(…)`,
/// MindSpore's `Tensor(shape=…, value=…)`, or a row of one printed over several lines, which
/// opens with `[`), and float16 named on the line or on one of the next four (such a print names
/// its dtype on its last line), on no CPU (`device='cpu'`). CANN's saturation mode stores an
/// overflow (Inf) as that value and a NaN as 0 (`aclrtFloatOverflowMode`): Atlas training and
/// inference series chips support only that mode, Atlas A2 and A3 default to Inf/NaN. It is a
/// sign, not a proof: float16 also rounds values just above 65504 to it, and code may fill or
/// clamp with it; a line of code (`x = torch.full((1,), 65504.)`, `finfo`) is no print.
pub fn saturated_half(lines: &[&str], i: usize) -> bool {
    let Some(line) = lines.get(i) else {
        return false;
    };
    let t = line.trim_start();
    let number = |c: char| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-');
    // +65504 only: −65504 is `finfo(float16).min`, the fill of every attention mask printed.
    let at_max = t
        .split(|c: char| !number(c))
        .filter(|w| w.bytes().any(|b| b.is_ascii_digit()))
        .any(|w| w.parse::<f64>().is_ok_and(|v| v == HALF_MAX));
    if !at_max {
        return false;
    }
    // A repr as printed opens the line (`tensor(`, `Tensor(shape=`, `array(`, a row's `[`),
    // after an optional label (`out: tensor(…)`, `>>> ` is no print); a call in code is
    // preceded by its module (`torch.tensor(`) or assigned (`x = `).
    let body = t.split_once(": ").map_or(t, |(label, rest)| {
        if label.contains(['(', '=', ' ']) {
            t
        } else {
            rest.trim_start()
        }
    });
    let printed = ["tensor(", "Tensor(", "array(", "["]
        .iter()
        .any(|p| body.starts_with(p));
    if !printed || t.contains("finfo") {
        return false;
    }
    // The print's own lines: up to the one that closes it (`…, dtype=torch.float16)`), at
    // most five.
    let end = lines[i..]
        .iter()
        .take(5)
        .position(|l| l.trim_end().ends_with(')'))
        .map_or(5, |k| k + 1);
    let own = || lines[i..].iter().take(end);
    let half = own().any(|l| {
        let l = l.to_ascii_lowercase();
        l.match_indices("float16")
            .any(|(at, _)| !l[..at].ends_with('b'))
            || l.contains("fp16")
            || l.contains("torch.half")
    });
    half && !own().any(|l| l.contains("device='cpu'"))
}

/// Whether a line is torch_npu's warning that an operator has no kernel on the NPU and runs on
/// the CPU instead (its `npu_cpu_fallback`: `CAUTION: The operator 'aten::isin.Tensor_Tensor_out'
/// is not currently supported on the NPU backend and will fall back to run on the CPU. This may
/// have performance implications.`; PyTorch's MPS backend words its own alike): every call goes
/// to the host and back. Either half of the warning is it, as a paste hard-wrapped at a fixed
/// width splits it (`… supported on the NPU backend and w` / `ill fall back to run on the CPU.
/// …`): the first half is the line to cite, the second no report's words of slowness.
pub fn cpu_fallback(line: &str) -> bool {
    const GOES_ON: &str = " and will fall back to run on the cpu";
    let l = line.to_ascii_lowercase();
    if l.contains("fall back to run on") && l.contains("cpu") {
        return true;
    }
    // The first half: what follows the backend's name goes on as the warning does (torch_npu's
    // error for sparse tensors, `… is not currently supported on the NPU backend.`, falls back
    // to nothing).
    l.contains("the operator '")
        && l.find("is not currently supported on the ")
            .is_some_and(|at| {
                l[at..].split_once(" backend").is_some_and(|(_, after)| {
                    let after = after.trim_end();
                    GOES_ON.starts_with(after) || after.starts_with(GOES_ON)
                })
            })
}

/// The line of llama.cpp's model loader that shows the weights left in host memory: it lists
/// every layer as offloaded (`offloaded 37/37 layers to GPU`), and of its `<buffer> model buffer
/// size = <n> MiB` lines (`llama_model_load`, one per buffer) the host's (`CPU`, `CPU_Mapped`,
/// `CPU_REPACK`) holds at least ten times the device buffers' (`CANN0`, `CUDA0`): the layers did
/// not take their weights along (a type the device backend does not take), and the model
/// computes on the CPU. A partial offload (`-ngl 2`) is the user's choice, not this. Returns the
/// index of the host buffer's line.
pub fn host_weights(lines: &[&str]) -> Option<usize> {
    const SIZE: &str = " model buffer size = ";
    let all_offloaded = lines.iter().any(|l| {
        l.split_once("offloaded ").is_some_and(|(_, r)| {
            let (n, rest) = r.split_once('/').unwrap_or(("", ""));
            let m = rest.split(' ').next().unwrap_or("");
            !n.is_empty() && n == m && n.bytes().all(|b| b.is_ascii_digit())
        })
    });
    if !all_offloaded {
        return None;
    }
    let (mut host, mut device, mut at) = (0.0f64, 0.0f64, None);
    let mut devices = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some(k) = line.find(SIZE) else {
            continue;
        };
        let name = line[..k].rsplit(char::is_whitespace).next().unwrap_or("");
        let Some(mib) = line[k + SIZE.len()..]
            .trim()
            .strip_suffix("MiB")
            .and_then(|n| n.trim().parse::<f64>().ok())
        else {
            continue;
        };
        if name.starts_with("CPU") {
            host += mib;
            if at.is_none() {
                at = Some(i);
            }
        } else if !name.is_empty() {
            device += mib;
            devices += 1;
        }
    }
    (devices > 0 && host > 0.0 && host >= 10.0 * device)
        .then_some(at)
        .flatten()
}

/// Units of time a rate is counted in (`tokens/s`, `s/it`, `请求/秒`, `ms/step`); not `min`,
/// which is as often a minimum (`min/max`).
const TIME_UNITS: &[&str] = &[
    "s", "sec", "secs", "second", "seconds", "ms", "minute", "minutes", "秒", "毫秒", "分钟",
];

/// Units of data: a rate of them is a transfer (pip's `3.4 MB/s` download), not the run's speed.
const DATA_UNITS: &[&str] = &[
    "b", "bytes", "kb", "kib", "mb", "mib", "gb", "gib", "tb", "tib", "bit", "kbit", "mbit", "gbit",
];

/// Where the number that ends `s` (before any spaces) starts: digits, `.` and `,`, ending in a
/// digit, and not the tail of a path, a word or a version (`/data/2.5`, `v2`, `x_3`).
fn figure_start(s: &str) -> Option<usize> {
    let t = s.trim_end_matches(' ');
    let start = t
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ',')
        .len();
    let figure = &t[start..];
    let own =
        !t[..start].ends_with(|c: char| c.is_alphanumeric() || matches!(c, '/' | '_' | '.' | '\\'));
    (own && figure.ends_with(|c: char| c.is_ascii_digit())).then_some(start)
}

/// Every speed a line measures, as written, in the line's order: a number, then a rate whose one
/// side is a unit of time and whose other side is a word that counts work (`35.2 tokens/s`,
/// `329.53s/it`, `12.3it/s`, `1.48 请求/秒`, `812 ms/step`), or `<number> <word> per second` —
/// not a transfer of data (`3.4 MB/s`), not a fraction (`68/9153`), not inside a path
/// (`/data/2.5s/it/`). What tqdm, serving engines' loggers, llama.cpp's timings and benchmark
/// scripts print; vLLM's engine line holds two (`Avg prompt throughput: 0.0 tokens/s, Avg
/// generation throughput: 2.4 tokens/s`).
pub fn speed_rates(line: &str) -> impl Iterator<Item = &str> {
    let word_char = |c: char| c.is_alphabetic();
    let slashed = line.match_indices('/').filter_map(move |(slash, _)| {
        let before = &line[..slash];
        let num = before.trim_end_matches(word_char);
        let num_word = &before[num.len()..];
        let after = &line[slash + 1..];
        let den = &after[..after.find(|c: char| !word_char(c)).unwrap_or(after.len())];
        let end = slash + 1 + den.len();
        // The unit ends the rate: not a path or a longer word going on (`s/it/x`, `s/it2`).
        let ended = !line[end..].starts_with(|c: char| c == '/' || c.is_alphanumeric());
        if num_word.is_empty() || den.is_empty() || !ended {
            return None;
        }
        let start = figure_start(num)?;
        let (n, d) = (num_word.to_lowercase(), den.to_lowercase());
        let timed = TIME_UNITS.contains(&n.as_str()) != TIME_UNITS.contains(&d.as_str());
        let data = DATA_UNITS.contains(&n.as_str()) || DATA_UNITS.contains(&d.as_str());
        (timed && !data).then_some((start, end))
    });
    const PER_SECOND: &str = " per second";
    let lower = line.to_ascii_lowercase();
    let per_second = lower.match_indices(PER_SECOND).filter_map(move |(at, _)| {
        let head = line[..at].trim_end_matches(word_char);
        let word = &line[head.len()..at];
        if word.is_empty()
            || !head.ends_with(' ')
            || DATA_UNITS.contains(&word.to_lowercase().as_str())
        {
            return None;
        }
        let start = figure_start(head)?;
        Some((start, at + PER_SECOND.len()))
    });
    let mut rates: Vec<(usize, usize)> = slashed.chain(per_second).collect();
    rates.sort_unstable();
    rates.into_iter().map(move |(start, end)| &line[start..end])
}

/// Serving engines' per-request metrics (lower case): time to first token, time per output token,
/// inter-token latency, end-to-end latency, tokens and queries per second.
const SERVING_METRICS: &[&str] = &["ttft", "tpot", "itl", "e2el", "tps", "qps"];

/// A serving metric a line measures, as written, with the value where the measurement starts:
/// a name of [`SERVING_METRICS`] as a whole word (`Mean TTFT`, a JSON key `"ttft"`), a unit in
/// brackets if any, `:` (or full-width `：`) or `=`, and a number with a decimal point or a unit
/// of time after it — llama.cpp's server (`ttft: 1523.93ms, tpot: 822.96ms, tps: 1.22`), vLLM's
/// and SGLang's benchmark summaries (`Mean TTFT (ms):   70.83`), their JSON results
/// (`"mean_ttft_ms"` is none: a key with more words). Not a setting: a whole number without a
/// unit (`qps: 50`), a `--goodput ttft:300` argument or its echo. The first metric on the line.
pub fn serving_metric(line: &str) -> Option<(&str, &str)> {
    let l = line.to_ascii_lowercase();
    if l.contains("goodput") {
        return None;
    }
    let b = l.as_bytes();
    let word_char = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    SERVING_METRICS
        .iter()
        .flat_map(|m| l.match_indices(m))
        .filter(|&(at, m)| {
            !at.checked_sub(1).is_some_and(|k| word_char(&b[k]))
                && !b.get(at + m.len()).is_some_and(word_char)
        })
        .filter_map(|(at, m)| {
            // `"ttft": …`, ` (ms): …`, `: …`, `= …`.
            let mut rest = l[at + m.len()..].trim_start_matches('"').trim_start();
            if let Some(unit) = rest.strip_prefix('(') {
                rest = unit_in_brackets(unit)?.1.trim_start();
            }
            let value = rest
                .strip_prefix([':', '='])
                .or_else(|| rest.strip_prefix('：'))?
                .trim_start();
            let number = value
                .bytes()
                .take_while(|c| c.is_ascii_digit() || matches!(c, b'.' | b','))
                .count();
            // A list's comma or a sentence's full stop after the number is not its part.
            let digits = value[..number].trim_end_matches([',', '.']).len();
            if !value.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let (after, unit) = unit_of_time(&value[digits..]);
            if !value[..digits].contains('.') && unit.is_none() {
                return None;
            }
            let value_at = l.len() - value.len();
            let stop = unit.map_or(value_at + digits, |u| l.len() - after.len() + u);
            Some((at, &line[at..stop], &line[value_at..stop]))
        })
        .min_by_key(|(at, _, _)| *at)
        .map(|(_, whole, value)| (whole, value))
}

/// Names of a measured duration (lower case): a word then `time` (`Prediction time`, `Inference
/// time`, `step time`), `latency`, and the Chinese `耗时`, `时延`, `延迟`.
const LATENCY_NAMES: &[&str] = &[" time", "latency", "耗时", "时延", "延迟"];

/// Words before `time` that name a setting or a clock, not a measured duration (lower case).
const NOT_DURATIONS: &[&str] = &[
    "wait", "sleep", "start", "end", "stop", "timeout", "up", "current", "local", "system", "max",
    "min", "limit",
];

/// A duration a line measures, as written, with the value where the measurement starts: a name
/// of [`LATENCY_NAMES`] (`time` after a word of its own), a unit in brackets if any, `:` (or
/// `：`) or `=`, an optional `avg` or `mean`, and a number with a unit of time after it —
/// Paddle-Lite's demos (`Prediction time: avg 11429.317000 ms`), benchmark scripts (`inference
/// latency: 35.2 ms`, `总耗时: 135.42 秒`). Not a clock (`time: 2025-06-25 16:47`), not a number
/// without a unit. Every duration on the line, in its order, with its length in seconds.
pub fn latencies(line: &str) -> Vec<(&str, &str, f64)> {
    let l = line.to_ascii_lowercase();
    let mut found: Vec<(usize, &str, &str, f64)> = LATENCY_NAMES
        .iter()
        .flat_map(|n| l.match_indices(n))
        .filter_map(|(at, n)| {
            // `time` after a word: ` time` must follow a letter (`Prediction time`), not a
            // field's start.
            let start = if n == " time" {
                let word = l[..at].trim_end_matches(|c: char| c.is_alphabetic());
                // A setting or a clock, not a measurement (`wait time: 1800 s`, `start time
                // (s) = 1719300000`).
                if word.len() == at || NOT_DURATIONS.contains(&&l[word.len()..at]) {
                    return None;
                }
                word.len()
            } else {
                at
            };
            let mut rest = l[at + n.len()..].trim_start();
            let mut bracket_unit = "";
            if let Some(unit) = rest.strip_prefix('(') {
                let (u, after) = unit_in_brackets(unit)?;
                if TIME_UNITS.contains(&u.trim()) || u.trim() == "us" {
                    bracket_unit = u.trim();
                }
                rest = after.trim_start();
            }
            let mut value = rest
                .strip_prefix([':', '='])
                .or_else(|| rest.strip_prefix('：'))?
                .trim_start();
            for w in ["avg", "mean", "average"] {
                if let Some(v) = value.strip_prefix(w) {
                    value = v.trim_start_matches([' ', ':']);
                }
            }
            if !value.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let digits = value
                .bytes()
                .take_while(|c| c.is_ascii_digit() || *c == b'.')
                .count();
            let digits = value[..digits].trim_end_matches('.').len();
            let (after, unit) = unit_of_time(&value[digits..]);
            // A unit after the number, or the name's bracketed unit and none after it.
            let bare = !after.starts_with(char::is_alphabetic);
            if unit.is_none() && (bracket_unit.is_empty() || !bare) {
                return None;
            }
            let value_at = l.len() - value.len();
            let stop = unit.map_or(value_at + digits, |u| l.len() - after.len() + u);
            let number: f64 = value[..digits].parse().ok()?;
            let unit_name = unit.map_or(bracket_unit, |u| &after[..u]);
            let seconds = number * seconds_per(unit_name);
            Some((start, &line[start..stop], &line[value_at..stop], seconds))
        })
        .collect();
    found.sort_by_key(|(at, ..)| *at);
    found.dedup_by_key(|(at, ..)| *at);
    found.into_iter().map(|(_, w, v, s)| (w, v, s)).collect()
}

/// A unit in brackets after a metric's name (`(ms)`, `(s)`), the text after `(`: the unit and
/// what follows its `)`, when the `)` closes within a unit's length (a line of unclosed brackets
/// is not searched to its end at every name).
fn unit_in_brackets(s: &str) -> Option<(&str, &str)> {
    let (k, _) = s.char_indices().take(12).find(|&(_, c)| c == ')')?;
    Some((&s[..k], &s[k + 1..]))
}

/// The text after a number (spaces skipped) and, when a unit of time starts it ([`TIME_UNITS`],
/// `us`: `11429.3 ms`, `912.50ms`), that unit's length.
fn unit_of_time(after_digits: &str) -> (&str, Option<usize>) {
    let after = after_digits.trim_start_matches(' ');
    let unit: usize = after
        .chars()
        .take_while(|c| c.is_alphabetic())
        .map(char::len_utf8)
        .sum();
    let word = &after[..unit];
    (
        after,
        (TIME_UNITS.contains(&word) || word == "us").then_some(unit),
    )
}

/// Seconds in one of a unit of time ([`TIME_UNITS`] and `us`).
fn seconds_per(unit: &str) -> f64 {
    match unit {
        "ms" | "毫秒" => 1e-3,
        "us" => 1e-6,
        "minute" | "minutes" | "分钟" => 60.0,
        _ => 1.0,
    }
}

/// Whether a char is one unit of text on its own: a CJK ideograph, a kana or a hangul syllable
/// (scripts written without spaces), or a CJK mark of a sentence (`，`, `。`, `、`, `！`, `？`,
/// `；`, `：`) — not a space, a fill or a symbol (`　`, `ー`, `・`, `＝`, `｜`).
fn char_unit(c: char) -> bool {
    matches!(
        c,
        '\u{3041}'..='\u{30FA}'
            | '\u{3400}'..='\u{4DBF}'
            | '\u{4E00}'..='\u{9FFF}'
            | '\u{AC00}'..='\u{D7AF}'
            | '\u{F900}'..='\u{FAFF}'
            | '、'
            | '。'
            | '，'
            | '！'
            | '？'
            | '；'
            | '：'
    )
}

/// Values a program prints many times in a row (a mask, a list of flags, a tensor of NaN, a
/// status column): no text a model generated.
const VALUE_WORDS: &[&str] = &["true", "false", "none", "null", "nan", "inf", "na", "ok"];

/// English words that carry no content: a model's word salad is made of them (`and at in in in
/// or in and and and from and`), a sentence is half of them at most.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "if", "so", "of", "in", "on", "at", "to", "from", "for",
    "with", "by", "as", "is", "are", "was", "be", "it", "that", "this", "i", "you", "he", "she",
    "we", "they", "who", "what", "not", "no", "do",
];

/// Whether a word is a value rather than text: a number (it starts with a digit: `3`, `0x0`), a
/// hexadecimal byte, half-word or word of a dump (`ff`, `ffff`, `deadbeef`; not a function word
/// such as `be`), a short name in capitals of a table's status column (`SYS`, `PIX`, `HCCS`; not
/// `I`), or one of [`VALUE_WORDS`].
fn value_word(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let hex = matches!(word.len(), 2 | 4 | 8)
        && word.bytes().all(|b| b.is_ascii_hexdigit())
        && !FUNCTION_WORDS.contains(&lower.as_str());
    let caps = (2..=4).contains(&word.len()) && word.bytes().all(|b| b.is_ascii_uppercase());
    word.starts_with(|c: char| c.is_ascii_digit())
        || hex
        || caps
        || VALUE_WORDS.contains(&lower.as_str())
}

/// The units of a line's text, each with the separator before it: words (runs of letters and
/// digits of alphabetic scripts) and single chars of CJK scripts and sentence marks; values
/// ([`value_word`]) and other signs are no unit (a separator's part).
fn text_units(line: &str) -> Vec<(&str, &str)> {
    let mut units = Vec::new();
    let mut sep_start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = if char_unit(c) {
            at + c.len_utf8()
        } else if c.is_alphanumeric() {
            let mut end = at + c.len_utf8();
            while let Some(&(k, d)) = chars.peek() {
                if !d.is_alphanumeric() || char_unit(d) {
                    break;
                }
                end = k + d.len_utf8();
                chars.next();
            }
            end
        } else {
            continue;
        };
        let word = &line[at..end];
        if !value_word(word) {
            units.push((&line[sep_start..at], word));
            sep_start = end;
        }
    }
    units
}

/// The text a model generated, as an OpenAI-compatible server returns it in JSON (`"text":"…"`
/// of a completion, `"content":"…"` of a chat message): the string's raw content, up to its
/// closing quote or the end of the line (a paste cut inside it). The response may itself sit
/// escaped in another JSON string (`"result": "{\"choices\":[{\"message\":{\"content\":\"…\"`, a
/// tool's or a gateway's wrapper), whether or not the wrapper has a `"text"` of its own: then up
/// to its first escaped quote that is not itself escaped (`\\\"` is a quote inside it).
fn generated_values(line: &str) -> impl Iterator<Item = &str> {
    let plain = ["\"text\":", "\"content\":"].iter().find_map(|key| {
        let at = line.find(key)? + key.len();
        let value = line[at..].trim_start().strip_prefix('"')?;
        let mut escaped = false;
        let end = value
            .char_indices()
            .find(|&(_, c)| {
                let close = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                close
            })
            .map_or(value.len(), |(k, _)| k);
        Some(&value[..end])
    });
    let escaped = ["\\\"text\\\":", "\\\"content\\\":"]
        .iter()
        .find_map(|key| {
            let at = line.find(key)? + key.len();
            let value = line[at..].trim_start().strip_prefix("\\\"")?;
            let end = value
                .match_indices("\\\"")
                .map(|(k, _)| k)
                .find(|&k| !value[..k].ends_with('\\'))
                .unwrap_or(value.len());
            Some(&value[..end])
        });
    // vLLM's offline examples print each output as a Python string: `Generated text: ' 7777'`.
    let printed = line.find("Generated text: ").and_then(|at| {
        let rest = &line[at + "Generated text: ".len()..];
        let quote = rest.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
        let value = &rest[1..];
        let mut escaped = false;
        let end = value
            .char_indices()
            .find(|&(_, c)| {
                let close = c == quote && !escaped;
                escaped = c == '\\' && !escaped;
                close
            })
            .map_or(value.len(), |(k, _)| k);
        Some(&value[..end])
    });
    plain.into_iter().chain(escaped).chain(printed)
}

/// The first line of a block of one to four lines that a text repeats six times or more in a
/// row, its lines sentences a model writes (three words or more and a sentence's mark, no
/// logger's or worker's prefix): a model's output that loops (`Wait, I'll output …` / `Okay,
/// I'll output …` over and over). A log repeats its records with their times and prefixes,
/// which this does not count.
pub fn repeated_lines(lines: &[&str]) -> Option<usize> {
    let prose = |l: &str| {
        let s = crate::line_prefix::strip_prefixes(l);
        let words = s
            .rest
            .split_whitespace()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .count();
        s.prefixes.is_empty()
            && crate::line_prefix::line_severity(&s.prefixes, s.rest.trim()).is_none()
            && words >= 3
            && s.rest.contains(['.', '!', '?', '。', '！', '？'])
    };
    let text: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
    (1..=4).find_map(|period| {
        let mut run = 0;
        (period..text.len()).find_map(|i| {
            run = if !text[i].is_empty() && text[i] == text[i - period] && prose(text[i]) {
                run + 1
            } else {
                0
            };
            (run + period >= 6 * period).then(|| i + 1 - run - period)
        })
    })
}

/// Whether generated text holds one character repeated twelve times or more as a word of its
/// own (`' 777777777777777'`): a model stuck on one token (runs of CJK characters, a unit each,
/// are the line rule's).
fn one_char_run(value: &str) -> bool {
    generated_tokens(value).iter().any(|t| {
        let mut chars = t.chars();
        let first = chars.next();
        t.chars().count() >= 12 && first.is_some_and(|f| chars.all(|c| c == f))
    })
}

/// The tokens of generated text: words and numbers (runs of letters and digits), single CJK
/// characters and single signs; blanks are none.
fn generated_tokens(value: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut rest = value;
    while let Some(c) = rest.chars().next() {
        let len = if c.is_alphanumeric() && !char_unit(c) {
            rest.find(|d: char| !d.is_alphanumeric() || char_unit(d))
                .unwrap_or(rest.len())
        } else {
            c.len_utf8()
        };
        let (token, tail) = rest.split_at(len);
        rest = tail;
        if !token.trim().is_empty() {
            tokens.push(token);
        }
    }
    tokens
}

/// A table's or a banner's fill (`|----|`, `=====`, `# ---`): it repeats by design.
const FILL: &[&str] = &["-", "=", "_", "*", "#", "~", "`", "|", "+"];

/// Whether generated text repeats one sentence (up to sixteen tokens, a sentence's mark among
/// them) eight times or more in a row — numbers and signs count, as the model wrote them (`1 + 1
/// = 2. 1 + 1 = 2. …`). A row of values without a sentence's mark (an array's zeros, a table's
/// rulers, escaped blank lines, a tensor a log record prints) repeats by design.
fn repeats_phrase(value: &str) -> bool {
    let tokens = generated_tokens(value);
    (2..=16).any(|period| {
        let mut run = 0;
        (period..tokens.len()).any(|i| {
            run = if tokens[i] == tokens[i - period] {
                run + 1
            } else {
                0
            };
            run + period >= 8 * period
                && tokens[i + 1 - period..=i]
                    .iter()
                    .any(|t| matches!(*t, "." | "!" | "?" | "。" | "！" | "？"))
        })
    })
}

/// Whether generated text is mostly one token — a punctuation mark, a word or a number counted
/// as a unit each (`,.,. and,.,,,,,,.,0 and,, and,,,`): forty tokens or more, one of them more
/// than half, and not a fill mark (a Markdown table's rulers, a banner). A list of numbers (`1,
/// 2, 3, …`) has its commas at half, not more.
fn marks_dominate(value: &str) -> bool {
    let tokens = generated_tokens(value);
    let total = tokens.len();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in tokens {
        *counts.entry(t).or_default() += 1;
    }
    let top = counts
        .iter()
        .filter(|(k, _)| !FILL.contains(k))
        .map(|(_, n)| *n)
        .max()
        .unwrap_or(0);
    total >= 40 && top * 2 > total
}

/// Whether the separator before a repeat of a phrase of `period` units keeps the run going:
/// nothing or one space between single units (a table pads its columns with more), and only
/// spaces and a sentence's marks between longer phrases (`I am a bot. I am a bot.`) — never a
/// number or a key, list or path sign.
fn run_separator(sep: &str, period: usize) -> bool {
    if period == 1 {
        sep.is_empty() || sep == " "
    } else {
        sep.chars()
            .all(|c| c.is_whitespace() || ".,!?;".contains(c))
    }
}

/// Whether a repeated phrase is one of its own length: not a shorter phrase repeated (`yes yes
/// yes yes` is `yes`, held to that period's count), and, from four units on, a sentence — a
/// mark of one inside it or between its repeats (`I am a bot.`, `我是一个助手。`), not a row of a
/// table's column names.
fn own_phrase(phrase: &[(&str, &str)]) -> bool {
    let p = phrase.len();
    let shorter = (1..p)
        .filter(|d| p % d == 0)
        .any(|d| (d..p).all(|k| phrase[k].1 == phrase[k - d].1));
    let marked = phrase.iter().any(|(sep, w)| {
        sep.contains(['.', ',', '!', '?', ';'])
            || w.chars()
                .all(|c| matches!(c, '。' | '，' | '！' | '？' | '；' | '、'))
    });
    !shorter && (p < 4 || marked)
}

/// Whether a line is generated text that degenerated into repetition, as a model with wrong
/// numbers writes it:
/// - one unit repeated twelve times or more in a row (`，，，，，，，，，，，，`), a phrase of two or
///   three units eight times (`我，我，我，…`), a longer phrase (up to sixteen units) three
///   times (`I am a bot. I am a bot. I am a bot.`), with only [`run_separator`]s between them;
/// - a line of English word salad: sixteen words or more, no key, list or path syntax, one word
///   a quarter or more of the words, function words ([`FUNCTION_WORDS`]) three quarters or more
///   (`and at in in in or in and and and from and`: a sentence is about half of them);
/// - the text of an OpenAI-compatible response mostly one token ([`marks_dominate`]) or one
///   phrase repeated ([`repeats_phrase`]).
///
/// Numbers, hexadecimal words, short capitals and flags ([`value_word`]) are no units, so a hex
/// dump, a topology table or a boolean mask repeats nothing.
pub fn degenerate_text(line: &str) -> bool {
    if generated_values(line).any(|v| marks_dominate(v) || repeats_phrase(v) || one_char_run(v)) {
        return true;
    }
    let units = text_units(line);
    let words: Vec<&str> = units.iter().map(|(_, w)| *w).collect();
    for period in 1..=16 {
        let repeats = match period {
            1 => 12,
            2 | 3 => 8,
            _ => 3,
        };
        let mut run = 0;
        for i in period..units.len() {
            let same = words[i] == words[i - period] && run_separator(units[i].0, period);
            run = if same { run + 1 } else { 0 };
            if run + period >= repeats * period && own_phrase(&units[i + 1 - period..=i]) {
                return true;
            }
        }
    }
    const SYNTAX: &[char] = &[
        ':', '=', '"', '\'', '[', ']', '{', '}', '/', '\\', '|', '<', '>',
    ];
    let english: Vec<&str> = words.iter().copied().filter(|w| w.is_ascii()).collect();
    if english.len() < 16 || units.iter().any(|(sep, _)| sep.contains(SYNTAX)) {
        return false;
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    for w in &english {
        *counts.entry(w.to_ascii_lowercase()).or_default() += 1;
    }
    let top = counts.values().copied().max().unwrap_or(0);
    let function = english
        .iter()
        .filter(|w| FUNCTION_WORDS.contains(&w.to_ascii_lowercase().as_str()))
        .count();
    top * 4 >= english.len() && function * 4 >= english.len() * 3
}

#[cfg(test)]
mod tests {
    use super::*;

    // Speeds as tqdm, serving engines, llama.cpp and benchmark scripts print them (wider-world
    // batches 22 and 25); transfers, fractions, paths and dates are none.
    #[test]
    fn speeds_a_run_measures() {
        for (line, rate) in [
            (
                "  1%|          | 68/9153 [10:53:27<831:36:06, 329.53s/it]",
                "329.53s/it",
            ),
            (
                "Train:  10%|█  | 10/100 [00:20<03:00, 12.3it/s]",
                "12.3it/s",
            ),
            (
                "Avg generation throughput: 35.2 tokens/s, Running: 1 reqs",
                "35.2 tokens/s",
            ),
            (
                "2025-06-25 16:47:28,987 - INFO - 平均吞吐量: 1.48 请求/秒",
                "1.48 请求/秒",
            ),
            ("step time 812 ms/step", "812 ms/step"),
            (
                "eval time = 1234.56 ms / 99 runs (12.47 ms per token, 80.20 tokens per second)",
                "80.20 tokens per second",
            ),
            ("decode 35.2  tokens/s", "35.2  tokens/s"),
            ("1,234.5 tokens/s", "1,234.5 tokens/s"),
        ] {
            assert_eq!(speed_rates(line).next(), Some(rate), "{line}");
        }
        for line in [
            "Downloading torch-2.3.1.whl (1.2 MB) 1.2/1.2 MB 3.4 MB/s eta 0:00:00",
            "  1%|          | 68/9153 [10:53:27<831:36:06]",
            "see /usr/local/Ascend/s/it for the file",
            "2025/06/25 16:47:28 started",
            "a/s and b/it",
            "bandwidth 180.5 GB/s",
            // A path, a minimum, a count before the words, a version.
            "ls /data/2.5s/it/x",
            "ls /data/2.5s/it",
            "seq len 128 min/max 2048",
            "Iter 3, tokens per second: 1234",
            "model v2 tokens/s",
        ] {
            assert_eq!(speed_rates(line).next(), None, "{line}");
        }
        // Every rate of a line, in order.
        assert_eq!(
            speed_rates("Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.4 tokens/s, Running: 4 reqs, 3 tokens per second, 1.2 MB/s")
                .collect::<Vec<_>>(),
            ["0.0 tokens/s", "2.4 tokens/s", "3 tokens per second"]
        );
        assert_eq!(
            speed_rates("throughput: 3 requests per second, 12.5 tokens/s").collect::<Vec<_>>(),
            ["3 requests per second", "12.5 tokens/s"]
        );
    }

    // Durations a run measures (wider-world batch 32: Paddle-Lite's demo on an Ascend 310).
    #[test]
    fn durations_a_run_measures() {
        for (line, whole) in [
            (
                "Prediction time: avg 11429.317000 ms, max 11447.121000 ms, min 11417.789000 ms",
                "Prediction time: avg 11429.317000 ms",
            ),
            (
                "[0] Preprocess time: 66.098000 ms Prediction time: 11423.041000 ms",
                "Preprocess time: 66.098000 ms",
            ),
            ("inference latency: 35.2 ms", "latency: 35.2 ms"),
            (
                "2025-06-25 16:47:28,987 - INFO - 总耗时: 135.42 秒",
                "耗时: 135.42 秒",
            ),
            ("step time (ms): 812.3", "step time (ms): 812.3"),
        ] {
            assert_eq!(
                latencies(line).first().map(|(w, ..)| *w),
                Some(whole),
                "{line}"
            );
        }
        for line in [
            "time: 2025-06-25 16:47:28",
            "start time: 1719300000",
            "time to first token",
            "the latency is high",
            "Time: 12",
            "elapsed time: 3 steps",
            // Settings and clocks (the review's).
            "HCCL wait time: 1800 s",
            "start time (s) = 1719300000",
            "sleep time: 5 s",
        ] {
            assert!(latencies(line).is_empty(), "{line}");
        }
        // Every duration of a line, in its order, in seconds.
        let all: Vec<(&str, f64)> =
            latencies("[0] Preprocess time: 66.0 ms Prediction time: 11423.0 ms 总耗时: 2 秒")
                .into_iter()
                .map(|(w, _, s)| (w, s))
                .collect();
        assert_eq!(
            all,
            [
                ("Preprocess time: 66.0 ms", 0.066),
                ("Prediction time: 11423.0 ms", 11.423),
                ("耗时: 2 秒", 2.0)
            ]
        );
    }

    #[test]
    fn metrics_logged_as_nan() {
        assert_eq!(nan_metric("mask value=nan in the last row"), None);
        assert_eq!(nan_metric("max_time: inf"), None);
        assert_eq!(
            nan_metric("step:3 - actor/entropy:0.8 - training/rollout_probs_diff_max:nan - x:1")
                .as_deref(),
            Some("training/rollout_probs_diff_max: nan")
        );
        assert_eq!(
            nan_metric("(TaskRunner pid=1) critic/kl:nan").as_deref(),
            Some("critic/kl: nan")
        );
        // Batch 34: a value asked about is not printed (`= inf?`); the printed one is.
        assert_eq!(
            nan_metric("优化后 grad_norm_before_clip = inf?应该是有溢出的问题？"),
            None
        );
        assert_eq!(nan_metric("grad_norm_before_clip = inf？"), None);
        assert_eq!(
            nan_metric("    grad_norm_before_clip = Inf").as_deref(),
            Some("grad_norm_before_clip: inf")
        );
    }

    // Batch 35's review: a matrix over several lines, read to its closing bracket.
    #[test]
    fn zero_blocks() {
        let torch = [
            "tensor([[0., 0., 0.],",
            "        [0., 0., 0.]], device='npu:0')",
        ];
        assert_eq!(zero_block(&torch, 0), Some(1));
        assert_eq!(zero_block(&torch, 1), None);
        let numpy = ["[[0. 0. 0.]", " [0. 0. 0.]]"];
        assert_eq!(zero_block(&numpy, 0), Some(1));
        let mixed = ["[[1. 2. 3.]", " [0. 0. 0.]]"];
        assert_eq!(zero_block(&mixed, 0), None);
        assert_eq!(zero_block(&mixed, 1), None);
        assert_eq!(zero_block(&["tensor([0., 0., 0.])"], 0), Some(0));
        assert_eq!(zero_block(&["tensor([[0., 0., 0.],"], 0), None);
        assert_eq!(zero_block(&["the output: [0, 0, 0]"], 0), None);
    }

    // Batch 34: a tensor or an array printed with zeros only; anything else is not.
    #[test]
    fn printed_zeros() {
        for zeros in [
            "tensor([0., 0., 0.,  ..., 0., 0., 0.], device='npu:0')",
            "array([0, 0, 0], dtype=int32)",
            "[0. 0. 0. ... 0. 0. 0.]",
            "tensor([[0., 0., 0.], [0., 0., 0.]])",
            "  [-0.0000, 0.0000, 0.0000]",
        ] {
            assert!(zero_values(zeros), "{zeros}");
        }
        for not in [
            "tensor([ 0.7859, -2.5347, -0.5112,  ...,  1.7073, -1.4685,  1.0604],",
            "tensor([0., 0.], device='npu:0')",
            "the output is [0, 0, 0]",
            "[0, 0, 1]",
            "[2026-01-01 00:00:00] 0 0 0",
            "[]",
            "[0, 0, 0, x]",
            // The first row of a matrix whose other rows follow.
            "tensor([[0., 0., 0.],",
            "        [0., 0., 0.],",
        ] {
            assert!(!zero_values(not), "{not}");
        }
    }

    #[test]
    fn computed_on_the_host() {
        assert!(cpu_fallback("The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on CPU"));
        assert!(!cpu_fallback("falling back to eager for this graph"));
        // A paste hard-wrapped at 100 columns: both halves.
        assert!(cpu_fallback("Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU backend and w"));
        assert!(cpu_fallback("ill fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)"));
        assert!(!cpu_fallback(
            "The model is not currently supported on the NPU backend"
        ));
        // torch_npu's error for sparse tensors: nothing falls back.
        assert!(!cpu_fallback("RuntimeError: CAUTION: The operator 'aten::_to_dense' is not currently supported on the NPU backend."));
        let log = [
            "I load_tensors: offloaded 37/37 layers to GPU",
            "I load_tensors:          CPU model buffer size = 15622.00 MiB",
            "I load_tensors:        CANN0 model buffer size =     1.18 MiB",
        ];
        assert_eq!(host_weights(&log), Some(1));
        // The weights on the device, or no device at all: not host weights.
        let offloaded = [
            "offloaded 37/37 layers to GPU",
            "CPU model buffer size = 300.00 MiB",
            "CANN0 model buffer size = 15000.00 MiB",
        ];
        assert_eq!(host_weights(&offloaded), None);
        let all = "offloaded 37/37 layers to GPU";
        assert_eq!(
            host_weights(&[all, "CPU model buffer size = 300.00 MiB"]),
            None
        );
        assert_eq!(host_weights(&[all, "CPU model buffer size = lots"]), None);
        // Two layers offloaded on purpose (`-ngl 2`): the host holds the rest by choice.
        let partial = [
            "offloaded 2/37 layers to GPU",
            "CPU_Mapped model buffer size = 14000.00 MiB",
            "CANN0 model buffer size = 800.00 MiB",
        ];
        assert_eq!(host_weights(&partial), None);
    }

    #[test]
    fn float16_at_its_largest_value() {
        let at = |text: &str, i| saturated_half(&text.lines().collect::<Vec<_>>(), i);
        assert!(at("tensor(65504., device='npu:0', dtype=torch.float16)", 0));
        assert!(at(
            "tensor([ 1.0000e+00, 6.5504e+04],\n       device='npu:0', dtype=torch.float16)",
            0
        ));
        assert!(at("Tensor(shape=[], dtype=Float16, value= 65504)", 0));
        assert!(at("array([65504.], dtype=float16)", 0));
        // Another value, another dtype, the limit asked for, a port.
        assert!(!at("tensor(65503., dtype=torch.float16)", 0));
        assert!(!at("tensor(65504.)", 0));
        assert!(!at("torch.finfo(torch.float16).max = 65504.0", 0));
        assert!(!at("listening on 0.0.0.0:165504 (fp16 model)", 0));
        // A labelled print is one; code, a CPU tensor and an interpreter's echo of code are not.
        assert!(at(
            "out: tensor([65504.], device='npu:0', dtype=torch.float16)",
            0
        ));
        assert!(!at("x = torch.full((1,), 65504., dtype=torch.float16)", 0));
        assert!(!at(">>> torch.tensor([65504.], dtype=torch.float16)", 0));
        // An attention mask's fill, bfloat16, a float32 print over a float16 one.
        assert!(!at(
            "tensor([[0., -65504.]], device='npu:0', dtype=torch.float16)",
            0
        ));
        assert!(!at(
            "tensor([65504.], device='npu:0', dtype=torch.bfloat16)",
            0
        ));
        assert!(!at(
            "tensor([65504.], device='npu:0')\ntensor([1.], dtype=torch.float16)",
            0
        ));
        assert!(!at(
            "tensor([65504.], device='cpu', dtype=torch.float16)",
            0
        ));
        assert!(!at("", 3));
    }

    // Wider-world batch 28: a model's output that degenerated (a run of one unit, a few words
    // over and over) against lines that repeat by design.
    #[test]
    fn generated_text_that_degenerated() {
        for line in [
            "{\"content\":\"你好，，，，，，，，，，，，，，我是\"}",
            "答：我是，我是，我是，我是，我是，我是，我是，我是，我是",
            "{\"choices\":[{\"index\":0,\"text\":\",.,. and,.,,,,,,.,0 and,, and,,,)),.,, a,;,,,.,,;;,,,,, and,, to,,,,,,,,,.,,,,\"}]}",
            "Hi Hi Hi Hi Hi Hi Hi Hi Hi Hi Hi Hi there",
            "I am a helpful assistant. I am a helpful assistant. I am a helpful assistant.",
            "我是一个人工智能助手。我是一个人工智能助手。我是一个人工智能助手。",
            "the of of the and the of and a of the and of the the of and a and of",
            // Generated text of numbers and signs repeated (batch 31), and a response escaped
            // inside another JSON string.
            &format!("{{\"content\":\"{}\"}}", "1 + 1 = 2. ".repeat(9)),
            &format!("\"result\": \"{{\\\"choices\\\":[{{\\\"message\\\":{{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":\\\"{}", "1 + 1 = 2. ".repeat(20)),
            // vLLM's offline example prints a Python string (batch 33): one digit over and over.
            "DP rank 0, Prompt: 'Hello, my name is', Generated text: ' 777777777777777'",
            // A wrapper with a `"text"` of its own over the escaped response (the review's).
            &format!("{{\"text\": \"request done\", \"result\": \"{{\\\"choices\\\":[{{\\\"message\\\":{{\\\"content\\\":\\\"{}\\\"}}}}]}}\"}}", "1 + 1 = 2. ".repeat(9)),
        ] {
            assert!(degenerate_text(line), "{line}");
        }
        for line in [
            "The quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun all day long.",
            "{'model.embed': 'npu', 'model.layers.0': 'npu', 'model.layers.1': 'npu', 'model.layers.2': 'npu', 'lm_head': 'npu'}",
            "tensor([True, True, True, True, True, True, True, True, True, True])",
            "[nan, nan, nan, nan, nan, nan, nan, nan, nan, nan]",
            "<exception_print> 0x3f100: 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0",
            "Loading: 100%|██████████████████████████████| 4/4 [00:03<00:00,  1.10it/s]",
            "======================================================================",
            "| rank | rank | rank | rank | rank | rank | rank | rank | rank | rank |",
            "我们在昇腾上运行模型，推理速度比预期慢，请帮忙看看是什么原因导致的。",
            "ok ok ok",
            // English sentences that repeat `the` (the review's), tables, dumps, fills.
            "When I run the model on the NPU the output of the model is different from the output of the model on the CPU",
            "How do I install the driver on the host so that the container can see the NPU of the host and the driver of the host",
            "00000010  ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff  |................|",
            "NPU0     X      HCCS   HCCS   HCCS   HCCS   HCCS   HCCS   HCCS   HCCS   HCCS   HCCS   HCCS   HCCS",
            "rank 0 rank 1 rank 2 rank 3 rank 4 rank 5 rank 6 rank 7 rank 8 rank 9 rank 10 rank 11 rank 12",
            "ーーーーーーーーーーーーーーーー　　　　　　　　　　　　　＝＝＝＝＝＝＝＝＝＝＝＝",
            "为什么？？？？？？？",
            "epoch 1 step 10 lr 0.001 loss 2.1 epoch 1 step 20 lr 0.001 loss 2.0 epoch 1 step 30 lr 0.001 loss 1.9",
            // The second review's: a Markdown table or a banner in an answer, a padded word, a
            // greeting six times, a header's names three times.
            "{\"content\":\"| Model | Score |\\n|----------------|----------------|\\n| Qwen2-7B | 70.1 |\\n| Llama3-8B | 66.6 |\"}",
            "{\"text\":\"========================================\"}",
            "yes    yes    yes    yes    yes    yes    yes    yes    yes    yes    yes    yes",
            "Hello world. Hello world. Hello world. Hello world. Hello world. Hello world.",
            "Name  Age  City  Job  Name  Age  City  Job  Name  Age  City  Job",
            "{\"text\":\"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]\"}",
            "{\"content\":\"Paris is the capital of France, and it is known for the Eiffel Tower, the Louvre, and its cafés.\"}",
            "{\"content\":\"1 + 1 = 2. 1 + 1 = 2. 1 + 1 = 2. Then 2 + 2 = 4.\"}",
            "{\"content\":\"| a | b |\\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\"}",
            // A log line that repeats values by design, outside a response.
            "1 + 1 = 2. 1 + 1 = 2. 1 + 1 = 2. 1 + 1 = 2. 1 + 1 = 2. 1 + 1 = 2. 1 + 1 = 2. 1 + 1 = 2. 1 + 1 = 2.",
            "\\\"content\\\": \\\"A short answer.\\\"",
            // The review's: values a response or a log record repeats by design.
            "{\"text\": \"2025-06-25 16:47:28.987 | INFO | __main__:step:42 - npu mask: tensor([0, 0, 0, 0, 0, 0, 0, 0, 0], device='npu:0')\\n\", \"record\": {}}",
            "{\"choices\":[{\"message\":{\"content\":\"```c\\nuint8_t buf[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};\\n```\"}}]}",
            "{\"content\":\"0.0f is 0000 0000 0000 0000 0000 0000 0000 0000\"}",
            "{\"content\":\"|:---:|:---:|:---:|:---:|:---:|:---:|:---:|:---:|\"}",
            "{\"content\":\"O O O O O O O O B-PER\"}",
            "Prompt: 'Hello, my name is', Generated text: ' John. I am 7 years old and I like 1000 things.'",
            "{\"content\":\"The hash is 0x00000000000000ff.\"}",
            "{\"content\":\"\\n\\n\\n\\n\\n\\n\\n\\n\\n\"}",
        ] {
            assert!(!degenerate_text(line), "{line}");
        }
    }

    // A model's output that loops over a few lines (wider-world batch 33), against logs that
    // repeat their records.
    #[test]
    fn lines_a_model_repeats() {
        let looped: Vec<&str> = std::iter::once("```text")
            .chain(
                [
                    "    Wait, I'll output `json{\"Answer\": B}`.",
                    "    Okay, I'll output `json{\"Answer\": \"B\"}`.",
                ]
                .repeat(7),
            )
            .collect();
        assert_eq!(repeated_lines(&looped), Some(1));
        let once = ["I am a bot. I can help you with that."; 6];
        assert_eq!(repeated_lines(&once), Some(0));
        for lines in [
            vec!["I am a bot. I can help you with that."; 5],
            vec!["[WARNING] 2025-01-01 00:00:00 the cache is full, evicting."; 8],
            vec!["Killed"; 8],
            vec!["INFO 07-26 17:51:57 [worker.py:1] step done."; 8],
            vec![""; 8],
        ] {
            assert_eq!(repeated_lines(&lines), None, "{lines:?}");
        }
    }

    // Serving engines' per-request metrics (wider-world batch 28): a name, `:` or `=`, a number.
    // A loss that jumps a hundredfold (wider-world batch 29, MindYOLO): training diverged.
    #[test]
    fn a_loss_that_diverges() {
        let log = [
            "Epoch 1/200, Step 100/3995, loss: 11.6707, lbox: 3.6262, lcls: 5.5689",
            "[WARNING] overflow, still update, loss scale adjust to 1024.0",
            "Epoch 1/200, Step 200/3995, loss: 8.8465, lbox: 2.9380, lcls: 3.8950",
            "Epoch 1/200, Step 300/3995, loss: 8712.5938, lbox: 4.1268, lcls: 8705.2168",
        ];
        assert_eq!(loss_spike(&log), Some((3, 8.8465, 8712.5938)));
        for quiet in [
            // Falling, wobbling, a loss scale that grows, an RL objective, too few values.
            &[
                "{'loss': 2.31}",
                "{'loss': 1.20}",
                "{'loss': 0.90}",
                "{'loss': 1.10}",
            ][..],
            &[
                "loss_scale: 1.0",
                "loss_scale: 65536.0",
                "loss scale: 1.0",
                "loss scale: 65536.0",
            ],
            &[
                "actor/pg_loss: 0.001",
                "actor/pg_loss: 0.002",
                "actor/pg_loss: 0.9",
            ],
            &["loss: 0.01", "loss: 5.0"],
            &["loss: 0.001", "loss: 0.002", "loss: 0.5"],
            // Another loss beside it, a percentage, a second run after one that converged.
            &[
                "aux loss: 0.0012",
                "lm loss: 2.31",
                "aux loss: 0.0011",
                "lm loss: 2.28",
                "aux loss: 0.0010",
                "lm loss: 2.20",
            ],
            &[
                "packet loss: 0.01%",
                "packet loss: 0.02%",
                "packet loss: 5.0%",
            ],
            &[
                "loss: 2.3",
                "loss: 0.5",
                "loss: 0.008",
                "loss: 2.3",
                "loss: 1.9",
            ],
        ] {
            assert_eq!(loss_spike(quiet), None, "{quiet:?}");
        }
    }

    #[test]
    fn serving_metrics_a_server_prints() {
        for (line, metric, value) in [
            (
                "rid 5 | prompt_tokens: 19, ttft: 1523.93ms, tpot: 82.1ms",
                "ttft: 1523.93ms",
                "1523.93ms",
            ),
            (
                "Mean TTFT (ms):                          70.83",
                "TTFT (ms):                          70.83",
                "70.83",
            ),
            (
                "completion_tokens: 455, tps: 1.22, dta: 0.00%",
                "tps: 1.22",
                "1.22",
            ),
            ("{\"tpot\": 41.2, \"ttft\": 90.5}", "tpot\": 41.2", "41.2"),
            ("e2el: 0 ms, itl: 12 ms", "e2el: 0 ms", "0 ms"),
            ("ITL：1,234.5ms", "ITL：1,234.5ms", "1,234.5ms"),
        ] {
            assert_eq!(serving_metric(line), Some((metric, value)), "{line}");
        }
        for line in [
            "ttft_budget: 100",
            "the itl of the run",
            "gptps: 3",
            "ttft: unknown",
            "qps: 50",
            "--goodput ttft:300 tpot:50",
            "\"mean_ttft_ms\": 70.8",
        ] {
            assert_eq!(serving_metric(line), None, "{line}");
        }
    }
}
