//! Python traceback lines and the wrapper exceptions that carry another error inside.
//!
//! Grammar (CPython `traceback` module output, after prefixes are peeled):
//!
//! ```text
//! traceback_start = "Traceback (most recent call last):"
//! frame           = "  File \"" path "\", line " n [", in " func]
//! exception       = type [": " message]          type = dotted name, see `exception_line`
//! chained         = "The above exception was the direct cause of the following exception:"
//!                 | "During handling of the above exception, another exception occurred:"
//! ```
//!
//! Wrappers (spec `triage-and-repro.md` §4):
//! * `torch._dynamo.exc.BackendCompilerFailed: backend='«repr»' raised:` — the real exception is on
//!   the next line;
//! * an exception repr embedded in a message with escaped newlines:
//!   `… find the original error: Unsupported('Observed exception\n\nfrom user code: …')`;
//! * `call aclnn«Op» failed, detail:«CANN error block»` (torch_npu `EXEC_NPU_CMD`).

use serde::Serialize;

/// `Traceback (most recent call last):` (CPython; CANN's `TraceBack` is a different thing), or
/// IPython's header, the exception's type before it and no colon (`NotImplementedError
/// Traceback (most recent call last)`, under a rule of dashes).
pub fn is_traceback_start(s: &str) -> bool {
    let t = s.trim();
    t == "Traceback (most recent call last):"
        || t.strip_suffix("Traceback (most recent call last)")
            .is_some_and(|head| {
                let name = head.trim_end();
                name.len() < head.len()
                    && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && !name.contains(char::is_whitespace)
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            })
}

/// The two lines CPython prints between chained exceptions.
pub fn is_chain_separator(s: &str) -> bool {
    let t = s.trim();
    t == "The above exception was the direct cause of the following exception:"
        || t == "During handling of the above exception, another exception occurred:"
}

/// One `File "…", line N, in func` frame line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame {
    pub file: String,
    pub line: u32,
    pub function: Option<String>,
}

impl Frame {
    /// Whether the frame is in a library rather than in the user's code: torch, torch_npu,
    /// torchair or anything installed under site-packages / dist-packages, or generated code
    /// (`<eval_with_key>.0`, `<frozen runpy>`).
    pub fn is_library(&self) -> bool {
        const LIBRARIES: [&str; 5] = [
            "site-packages",
            "dist-packages",
            "torch",
            "torch_npu",
            "torchair",
        ];
        // A folder of the path (never the file name itself) names a library; IPython 7's cell
        // (`<ipython-input-3-2f0d1e8a9b1c>`) is the user's code.
        (self.file.starts_with('<') && !self.file.starts_with("<ipython-input-"))
            || self
                .file
                .split(['/', '\\'])
                .rev()
                .skip(1)
                .any(|dir| LIBRARIES.contains(&dir))
    }
}

/// Parses a traceback frame line (leading indentation allowed): CPython's `File "<path>", line
/// <n>, in <function>`, or IPython's (8 and later) `File <path>.py:<n>, in <function>(<args>)`
/// and `Cell In[<k>], line <n>`, (8.0 to 8.5) `Input In [<k>], in <cell line: <n>>()`, or (7)
/// `<path>.py in <function>(<args>)` and `<ipython-input-<k>-<hash>> in <module>` — IPython 7
/// puts the line on the arrow below (`----> 2 y = f(x)`, [`arrow_line`]): `line` 0 here.
pub fn frame_line(s: &str) -> Option<Frame> {
    let t = s.trim_start();
    if let Some(rest) = t.strip_prefix("Input In [") {
        let (cell, rest) = rest.split_once("], in ")?;
        (!cell.is_empty() && cell.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
        let file = format!("Input In [{cell}]");
        if let Some(line) = rest.strip_prefix("<cell line: ") {
            let (line, after) = line_number(line)?;
            return (after.trim_end() == ">()").then_some(Frame {
                file,
                line,
                function: None,
            });
        }
        return Some(Frame {
            file,
            line: 0,
            function: called(&format!(", in {rest}"))?,
        });
    }
    if let Some(f) = ipython7_frame(t) {
        return Some(f);
    }
    if let Some(rest) = t.strip_prefix("File ").filter(|r| !r.starts_with('"')) {
        return ipython_frame(rest);
    }
    if let Some(rest) = t.strip_prefix("Cell In[") {
        // `Cell In[3], line 1` (the cell's own code) or `Cell In[121], line 3, in f(arg)` (a
        // function defined in that cell).
        let (cell, rest) = rest.split_once("], line ")?;
        (!cell.is_empty() && cell.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
        let (line, after) = line_number(rest)?;
        return Some(Frame {
            file: format!("Cell In[{cell}]"),
            line,
            function: called(after)?,
        });
    }
    let rest = t.strip_prefix("File \"")?;
    let (file, rest) = rest.split_once("\", line ")?;
    let (line, tail) = line_number(rest)?;
    let function = tail.strip_prefix(", in ").map(|f| f.trim_end().to_string());
    if function.is_none() && !tail.trim().is_empty() {
        return None;
    }
    Some(Frame {
        file: file.to_string(),
        line,
        function,
    })
}

/// What follows an IPython frame's line: nothing, or `, in <function>(<args>)` — the function's
/// name (`Some(None)`: none given; `None`: something else follows, no frame).
fn called(after: &str) -> Option<Option<String>> {
    match after.strip_prefix(", in ") {
        Some(f) => Some(Some(
            f.split_once('(')
                .map_or(f, |(name, _)| name)
                .trim_end()
                .to_string(),
        )),
        None if after.trim().is_empty() => Some(None),
        None => None,
    }
}

/// IPython 7's frame: a Python file or a cell, ` in `, the function and its arguments.
fn ipython7_frame(t: &str) -> Option<Frame> {
    let (file, function) = t.trim_end().split_once(" in ")?;
    let cell = file
        .strip_prefix("<ipython-input-")
        .and_then(|c| c.strip_suffix('>'))
        .is_some_and(|c| {
            c.split_once('-').is_some_and(|(k, hash)| {
                !k.is_empty()
                    && k.bytes().all(|b| b.is_ascii_digit())
                    && !hash.is_empty()
                    && hash.bytes().all(|b| b.is_ascii_hexdigit())
            })
        });
    let path = [".py", ".pyx", ".pxi"]
        .iter()
        .any(|x| file.len() > x.len() && file.ends_with(x))
        && !file.contains(char::is_whitespace);
    let name = function.split_once('(').map_or(function, |(name, _)| name);
    // An identifier, or the name CPython gives code without one (`<module>`, `<lambda>`,
    // `<listcomp>`, `<genexpr>`).
    let generated = name
        .strip_prefix('<')
        .and_then(|n| n.strip_suffix('>'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase()));
    let named = generated
        || (!name.is_empty()
            && name.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_'));
    // The arguments in brackets follow a function's name (`in forward(self, x)`); a module's
    // code in a cell has none (`<ipython-input-3-…> in <module>`). Without them, prose (`run.py
    // in background`) is no frame.
    let args = if function.len() == name.len() {
        cell || name == "<module>"
    } else {
        function.ends_with(')')
    };
    ((cell || path) && named && args).then(|| Frame {
        file: file.to_string(),
        line: 0,
        function: Some(name.to_string()),
    })
}

/// The line number IPython's arrow points at under a frame (`----> 2 y = f(x)`, `-> 1102
/// return forward_call(*input)`): dashes, `>`, spaces, the number.
pub fn arrow_line(s: &str) -> Option<u32> {
    let t = s.trim_start();
    let rest = t.trim_start_matches('-');
    if rest.len() == t.len() {
        return None;
    }
    let rest = rest.strip_prefix('>')?;
    let digits = rest.trim_start_matches(' ');
    (digits.len() < rest.len())
        .then(|| line_number(digits))
        .flatten()
        .filter(|(n, after)| *n > 0 && (after.is_empty() || after.starts_with(' ')))
        .map(|(n, _)| n)
}

/// The line number a frame's text starts with, and the text after it.
fn line_number(s: &str) -> Option<(u32, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    Some((s.get(..end)?.parse().ok()?, s.get(end..)?))
}

/// IPython's frame after `File `: `~/work/x.py:1159, in memory_efficient_attention(query, key)`
/// — a Python file, its line, and the function with its arguments (the function's name kept).
fn ipython_frame(rest: &str) -> Option<Frame> {
    let (file, tail) = rest.split_once(".py:")?;
    let (line, after) = line_number(tail)?;
    let function = called(after)?;
    (!file.is_empty() && !file.contains('"')).then(|| Frame {
        file: format!("{file}.py"),
        line,
        function,
    })
}

/// An exception line: `torch._dynamo.exc.Unsupported: message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExceptionLine<'a> {
    /// The type as printed, possibly dotted (`torch._dynamo.exc.Unsupported`).
    pub type_name: &'a str,
    /// Text after `: ` (empty when the exception has no message).
    pub message: &'a str,
}

impl ExceptionLine<'_> {
    /// The last component of the type name (`Unsupported`).
    pub fn short_type(&self) -> &str {
        self.type_name.rsplit('.').next().unwrap_or(self.type_name)
    }
}

/// Recognises an exception line at column 0. The type is a dotted identifier whose last part is
/// CamelCase and either dotted (`torch._dynamo.exc.Unsupported`) or ending in `Error`,
/// `Exception`, `Interrupt`, `Exit`, `Failed` or `Unsupported` (dynamo's graph-break error) — so `Explanation:` or `Hint:` are not
/// exceptions. Warnings are not errors and are left out.
pub fn exception_line(s: &str) -> Option<ExceptionLine<'_>> {
    let s = s.trim_end_matches(['\r', '\n']);
    if s.starts_with(char::is_whitespace) {
        return None;
    }
    let name_end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(s.len());
    let type_name = s.get(..name_end)?;
    let message = match s.get(name_end..)? {
        "" => "",
        rest => rest
            .strip_prefix(": ")
            .or_else(|| rest.strip_prefix(':').filter(|r| r.is_empty()))?,
    };
    if type_name.is_empty()
        || type_name.starts_with('.')
        || type_name.ends_with('.')
        || type_name.contains("..")
        || type_name.starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    let short = type_name.rsplit('.').next().unwrap_or(type_name);
    let dotted = type_name.contains('.');
    // A module's own exception class named in lower case (`cv2.error`, `struct.error`), with
    // its message: a closed list, so a metric (`val.error: 0.031`) is not one.
    const LOWER_CASE_ERRORS: &[&str] = &[
        "cv2.error",
        "struct.error",
        "zlib.error",
        "re.error",
        "_curses.error",
        "termios.error",
        "dbm.error",
    ];
    let module_error = LOWER_CASE_ERRORS.contains(&type_name) && !message.is_empty();
    if !(short.starts_with(|c: char| c.is_ascii_uppercase()) || module_error)
        || short.ends_with("Warning")
    {
        return None;
    }
    let errorish = module_error
        || [
            "Error",
            "Exception",
            "Interrupt",
            "Exit",
            "Failed",
            "Unsupported",
        ]
        .iter()
        .any(|suffix| short.ends_with(suffix));
    if !(dotted || errorish) {
        return None;
    }
    // A bare word with no message (`SomethingError`) counts only if it is error-ish.
    if message.is_empty() && !errorish {
        return None;
    }
    Some(ExceptionLine { type_name, message })
}

/// `BackendCompilerFailed: backend='«repr»' raised:` → the backend repr. The inner exception is
/// the next line of the log.
pub fn backend_compiler_failed(e: &ExceptionLine<'_>) -> Option<String> {
    if e.short_type() != "BackendCompilerFailed" {
        return None;
    }
    let m = e.message.trim_end();
    let m = m.strip_suffix("raised:")?.trim_end();
    let repr = m.strip_prefix("backend=").unwrap_or(m);
    let repr = repr
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or(repr);
    Some(repr.to_string())
}

/// An exception embedded as a repr inside another message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmbeddedError {
    /// Byte offset of the type name in the outer message.
    pub offset: usize,
    pub type_name: String,
    /// The repr's string argument with `\n`, `\t`, `\'`, `\"` and `\\` unescaped.
    pub message: String,
}

/// Finds `TypeName('…')` / `TypeName("…")` in a message, where the type looks like an exception
/// (see [`exception_line`]); returns the first one with its unescaped text.
pub fn embedded_error(message: &str) -> Option<EmbeddedError> {
    let bytes = message.as_bytes();
    let mut search = 0;
    while let Some(rel) = message
        .get(search..)?
        .find("('")
        .or_else(|| message.get(search..)?.find("(\""))
    {
        let open = search + rel;
        let quote = bytes.get(open + 1).copied().map(char::from)?;
        let name_start = message[..open]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .map_or(0, |i| i + 1);
        let type_name = &message[name_start..open];
        let probe = format!("{type_name}: x");
        if exception_line(&probe).is_some() {
            let body = &message[open + 2..];
            let text = unescape_until(body, quote);
            return Some(EmbeddedError {
                offset: name_start,
                type_name: type_name.to_string(),
                message: text,
            });
        }
        search = open + 2;
    }
    None
}

/// Unescapes a Python string-literal body up to the closing `quote` (or the end).
fn unescape_until(body: &str, quote: char) -> String {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some(other) => out.push(other),
                None => break,
            },
            c if c == quote => break,
            c => out.push(c),
        }
    }
    out
}

/// `call aclnnFoo failed, detail:«rest»` → (`aclnnFoo`, rest). torch_npu puts the CANN error
/// block after `detail:`, sometimes on the same line.
pub fn aclnn_call_failed(message: &str) -> Option<(&str, &str)> {
    let at = message.find("call aclnn")?;
    let rest = &message[at + "call ".len()..];
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let op = &rest[..name_end];
    let after = rest[name_end..].strip_prefix(" failed")?;
    let detail = after
        .strip_prefix(", detail:")
        .map(str::trim_start)
        .unwrap_or("");
    Some((op, detail))
}

/// A Python `logging` line in the default format: `ERROR:torch_npu._inductor.config:message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoggingLine<'a> {
    pub level: &'a str,
    pub logger: &'a str,
    pub message: &'a str,
}

/// Recognises `LEVEL:logger:message` with LEVEL one of the standard names.
pub fn logging_line(s: &str) -> Option<LoggingLine<'_>> {
    let (level, rest) = s.split_once(':')?;
    if !matches!(level, "CRITICAL" | "ERROR" | "WARNING" | "INFO" | "DEBUG") {
        return None;
    }
    let (logger, message) = rest.split_once(':')?;
    if logger.is_empty() || logger.contains(' ') {
        return None;
    }
    Some(LoggingLine {
        level,
        logger,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        assert_eq!(
            frame_line("  File \"/x/torch/_dynamo/eval_frame.py\", line 659, in _fn"),
            Some(Frame {
                file: "/x/torch/_dynamo/eval_frame.py".into(),
                line: 659,
                function: Some("_fn".into())
            })
        );
        assert_eq!(
            frame_line("  File \"src/nexfort/fx_compiler/fx_compiler.py\", line 40, in nexfort.fx_compiler.fx_compiler.compile_fx")
                .map(|f| f.line),
            Some(40)
        );
        // IPython 8's frames.
        assert_eq!(
            frame_line("File ~/work/xformers/ops/fmha.py:1159, in memory_efficient_attention(query, key, value, attn_bias)"),
            Some(Frame {
                file: "~/work/xformers/ops/fmha.py".into(),
                line: 1159,
                function: Some("memory_efficient_attention".into())
            })
        );
        assert_eq!(
            frame_line("Cell In[3], line 1").map(|f| (f.file, f.line)),
            Some(("Cell In[3]".into(), 1))
        );
        assert_eq!(
            frame_line("Cell In[121], line 3, in f(arg)").map(|f| (f.line, f.function)),
            Some((3, Some("f".into())))
        );
        assert_eq!(frame_line("Cell In[], line 1"), None);
        // IPython 8.0 to 8.5, and 7 (its line on the arrow below).
        assert_eq!(
            frame_line("Input In [3], in <cell line: 1>()").map(|f| (f.file, f.line)),
            Some(("Input In [3]".into(), 1))
        );
        assert_eq!(
            frame_line("Input In [5], in f(x)").map(|f| (f.line, f.function)),
            Some((0, Some("f".into())))
        );
        let cell = frame_line("<ipython-input-3-2f0d1e8a9b1c> in <module>").unwrap();
        assert_eq!((cell.line, cell.function.as_deref()), (0, Some("<module>")));
        assert_eq!(
            frame_line("~/x.py in <lambda>(x)").and_then(|f| f.function),
            Some("<lambda>".into())
        );
        assert!(!cell.is_library());
        assert_eq!(
            frame_line("~/work/net.py in forward(self, x)").map(|f| (f.file, f.function)),
            Some(("~/work/net.py".into(), Some("forward".into())))
        );
        assert!(frame_line(
            "/usr/lib/python3.7/site-packages/torch/nn/modules/module.py in _call_impl(self, *input, **kwargs)"
        )
        .unwrap()
        .is_library());
        for not in [
            "the error in train.py in my code",
            "x.py in f(a",
            "<ipython-input-x-2f> in <module>",
            "model.py in 2 places",
            "Input In [a], in f()",
            "Input In [3], in <cell line: x>()",
            "run.py in background",
        ] {
            assert_eq!(frame_line(not), None, "{not}");
        }
        assert_eq!(arrow_line("----> 2 y = model(x.npu())"), Some(2));
        assert_eq!(arrow_line("-> 1102             return f(x)"), Some(1102));
        assert_eq!(arrow_line("---> 11"), Some(11));
        for not in ["--> x", "1102 return", "-> 0 x", "->", "- > 3", "---->12a"] {
            assert_eq!(arrow_line(not), None, "{not}");
        }
        assert!(!is_traceback_start(
            "123   Traceback (most recent call last)"
        ));
        for not in [
            "File /etc/hosts:3, in x",
            "File x.py:abc",
            "Cell In[a], line 1",
            "File report.txt is missing",
        ] {
            assert_eq!(frame_line(not), None, "{not}");
        }
        assert!(is_traceback_start(
            "NotImplementedError                       Traceback (most recent call last)"
        ));
        assert!(!is_traceback_start("Traceback (most recent call last)"));
        assert!(!is_traceback_start(
            "see the Traceback (most recent call last)"
        ));
        assert_eq!(
            frame_line("  File \"a.py\", line 3"),
            Some(Frame {
                file: "a.py".into(),
                line: 3,
                function: None
            })
        );
        assert_eq!(frame_line("    raise e"), None);
        assert_eq!(frame_line("  File \"a.py\", line x"), None);
    }

    #[test]
    fn exception_lines() {
        let e = exception_line(
            "torch._dynamo.exc.Unsupported: Operator does not support running with fake tensors",
        )
        .unwrap();
        assert_eq!(e.short_type(), "Unsupported");
        assert_eq!(
            e.message,
            "Operator does not support running with fake tensors"
        );
        assert_eq!(
            exception_line("AssertionError: tensor's device must be `meta`")
                .unwrap()
                .type_name,
            "AssertionError"
        );
        assert_eq!(exception_line("KeyboardInterrupt").unwrap().message, "");
        assert!(exception_line("RuntimeError:").is_some());
        // A module's lower-case exception class, with its message.
        for (line, ty) in [
            (
                "cv2.error: OpenCV(4.9.0) a.cpp:1: error: (-2:Unspecified error) x",
                "cv2.error",
            ),
            (
                "struct.error: unpack requires a buffer of 4 bytes",
                "struct.error",
            ),
        ] {
            assert_eq!(exception_line(line).unwrap().type_name, ty, "{line}");
        }
        for not in [
            "cv2.error",
            "error: x",
            "cv2.errors: x",
            "val.error: 0.031",
            "eval.error: nan",
            "  Explanation:",
            "Explanation: x",
            "Hint: see docs",
            "Error in chat completion stream generator.",
            "UserWarning: careful",
            "torch._dynamo.config.suppress_errors = True",
            "Aborted (core dumped)",
            "http://x.y: z",
            "",
        ] {
            assert!(exception_line(not).is_none(), "{not}");
        }
    }

    #[test]
    fn backend_compiler_failed_wrapper() {
        let e = exception_line("torch._dynamo.exc.BackendCompilerFailed: backend='functools.partial(<function _npu_backend at 0xfffdb1f92820>, compiler_config=<x>)' raised:").unwrap();
        assert_eq!(
            backend_compiler_failed(&e).as_deref(),
            Some(
                "functools.partial(<function _npu_backend at 0xfffdb1f92820>, compiler_config=<x>)"
            )
        );
        let e = exception_line("torch._dynamo.exc.BackendCompilerFailed: backend='eager' raised:")
            .unwrap();
        assert_eq!(backend_compiler_failed(&e).as_deref(), Some("eager"));
        let e = exception_line("RuntimeError: raised:").unwrap();
        assert_eq!(backend_compiler_failed(&e), None);
    }

    #[test]
    fn embedded_repr_is_unescaped() {
        let m = r#"Engine loop is not running. Inspect the stacktrace to find the original error: Unsupported('Observed exception\n\nfrom user code:\n   File "x.py", line 652, in forward\n').")"#;
        let e = embedded_error(m).unwrap();
        assert_eq!(e.type_name, "Unsupported");
        assert_eq!(
            e.message,
            "Observed exception\n\nfrom user code:\n   File \"x.py\", line 652, in forward\n"
        );
        assert_eq!(&m[e.offset..e.offset + 11], "Unsupported");
        assert_eq!(embedded_error("print('hello')"), None);
        assert_eq!(
            embedded_error("ValueError(\"it\\'s\")").unwrap().message,
            "it's"
        );
    }

    #[test]
    fn aclnn_detail() {
        assert_eq!(
            aclnn_call_failed(
                "call aclnnMoeDistributeDispatchV2 failed, detail:EZ9999: Inner Error!"
            ),
            Some(("aclnnMoeDistributeDispatchV2", "EZ9999: Inner Error!"))
        );
        assert_eq!(
            aclnn_call_failed("NPU function error: call aclnnAdd failed, error code is 207001"),
            Some(("aclnnAdd", ""))
        );
        assert_eq!(aclnn_call_failed("call foo failed"), None);
    }

    #[test]
    fn logging_lines() {
        let l =
            logging_line("ERROR:torch_npu._inductor.config:Triton compilation failed: triton_x")
                .unwrap();
        assert_eq!(l.level, "ERROR");
        assert_eq!(l.logger, "torch_npu._inductor.config");
        assert_eq!(l.message, "Triton compilation failed: triton_x");
        assert!(logging_line("RuntimeError: x: y").is_none());
    }

    #[test]
    fn never_panics_on_odd_input() {
        for s in [
            "",
            "(",
            "('",
            "X('",
            "Error('\\",
            "File \"",
            "  File \"a\", line ",
            "call aclnn",
            "ERROR::",
            "é: ü",
            "a.b.C: ('",
            "BackendCompilerFailed: raised:",
            "\u{0}\u{ffff}",
        ] {
            let _ = frame_line(s);
            let _ = exception_line(s).map(|e| backend_compiler_failed(&e));
            let _ = embedded_error(s);
            let _ = aclnn_call_failed(s);
            let _ = logging_line(s);
            let _ = crate::line_prefix::strip_prefixes(s);
        }
    }
}
