//! Compiler diagnostics: what a kernel or operator compiled at run time prints when it does not
//! compile — Triton-Ascend through BiSheng IR, AscendC through bisheng (clang), TBE / TIK
//! operators through their Python compiler, GE / ATC operator builds.
//!
//! Grammar of one line (after logger prefixes come off, see [`crate::line_prefix`]):
//!
//! ```text
//! diagnostic := mlir | clang | tool | linker | tbe-dict
//! mlir       := "loc(" location ")" ": " severity ": " message       (MLIR, bishengir-compile)
//! clang      := path ":" line [":" column] ": " severity ": " message  (clang, LLVM tools, gcc)
//! tool       := program ": " (severity ": " | option-error) message   (a driver or tool itself)
//! option-error := "for the " option " option: "                       (LLVM cl::opt, an error)
//! linker     := ld ": " ("cannot find " | "cannot open ") …            (GNU ld, no severity)
//!             | [ld ": "] place ": " ("undefined reference to " | "multiple definition of "
//!                                   | "error adding symbols: " | "无法添加符号: ") …
//!               (place: `x.o:(.text+0x1a)`, `op.cc:42`, `x.o`; a `tool` line of a linker
//!               program, `ld.lld: error: …`, is a linker's too)
//! tbe-dict   := … "{'errCode': '" code "'" … "}" …                   (TBE / TIK compile errors)
//! severity   := "error" | "fatal error" | "warning" | "note" | "remark"
//!             | "错误" | "致命错误" | "警告" | "附注"   (GCC's zh_CN messages, then "：" and no
//!               space; only after a location with its column, or after a GCC program's name)
//! location   := balanced text: `"file":line:col`, `callsite(… at …)`, `fused[…]`, `unknown`
//! path       := a token without spaces holding `/` or `.`, ending before `:<digits>`
//! program    := a token without spaces whose last `/`-part has no upper-case letter (tools are
//!               named in lower case; `RuntimeError: error: …` is a Python exception, not a tool)
//! ```
//!
//! Only `error` and `fatal error` (`错误`, `致命错误`) state a failure; warnings, notes and remarks are context. The
//! first error a compiler prints is its cause: later errors are often consequences of it, and the
//! lines that say a whole pipeline or tool failed — `Failed to run BiShengHIR pipeline`, `Triton
//! compilation failed`, `ATC run failed`, `[<Stage>] encounters error:`, the compiler driver's
//! `collect2: error: ld returned 1 exit status` after the linker's own lines — are wrappers
//! ([`is_compile_wrapper`]), whether they are printed before the diagnostic or after it.
//!
//! Sources of the formats: MLIR's diagnostic printer (`loc(...)` prefix), clang's text
//! diagnostics, Triton-Ascend `python/triton/compiler/{compiler,errors}.py` (the stage names and
//! the `[ERROR][Triton][BEG]` block), AscendNPU-IR `RetriablePassManager.cpp` and
//! `bishengir-compile.cpp` (the pipeline failures), TBE's `error_manager_vector.py` and
//! `tbe_python_error_mgr.py` (the `errCode` dicts), GE's `fusion_manager.cc` and ATC's
//! `main_impl.cc` (the operator and tool wrappers), LLVM's `WithColor::error` (`<program>: error:`)
//! and `cl::Option::error` in `CommandLine.cpp` (`<program>: for the --<option> option: <message>`,
//! e.g. `Cannot find option named '<value>'!` for a value the option does not list), GNU
//! binutils' `ld` (`ldmisc.c`'s `%P: cannot find %s`, and `%X%C: undefined reference to `%T'`
//! with the object and section as the location; ld names no severity for these errors).
//!
//! What it is not for: deciding which of several errors came first across a text (that is
//! [`crate::causal`]) or reading files.

use std::sync::LazyLock;

use crate::needles::Needles;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    FatalError,
    Warning,
    Note,
    Remark,
}

impl Severity {
    /// Whether the diagnostic states a failure.
    pub fn is_error(self) -> bool {
        matches!(self, Severity::Error | Severity::FatalError)
    }
}

/// Which grammar a diagnostic was read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `loc("<file>":<line>:<col>): error: <message>`.
    Mlir,
    /// `<file>:<line>:<col>: error: <message>`.
    Clang,
    /// `<program>: error: <message>` or `<program>: for the --<option> option: <message>`: a
    /// compiler driver or tool about its own run (arguments, targets, inputs), no source location.
    Tool,
    /// `{'errCode': 'E90003', …}` of a TBE / TIK operator compile.
    TbeDict,
    /// GNU ld about the link (`ld: cannot find -lx`, `x.o:(.text+0x1a): undefined reference to
    /// `f'`): a library or symbol the link needs, not a line of source.
    Linker,
}

/// One compiler diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic<'a> {
    pub form: Form,
    pub severity: Severity,
    /// The source file the diagnostic points at, when it names one.
    pub file: Option<&'a str>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// The CANN error code of a TBE dict (`E90003`).
    pub code: Option<&'a str>,
    /// What the compiler says is wrong.
    pub message: &'a str,
}

/// What a compiler says when a name is unknown where it is used (clang's and GCC's wordings):
/// the cause of the syntax errors it reports around that name on the same line.
const NAME_LOOKUP: &[&str] = &[
    "no member named ",
    "use of undeclared identifier ",
    "unknown type name ",
    "no template named ",
    "was not declared in this scope",
    "is not a member of ",
    "has no member named ",
    "does not name a type",
];

impl Diagnostic<'_> {
    /// Whether the diagnostic says a name is unknown ([`NAME_LOOKUP`]).
    pub fn is_name_lookup(&self) -> bool {
        NAME_LOOKUP.iter().any(|w| self.message.contains(w))
    }

    /// Whether the diagnostic only says the parser met a token it did not expect (`expected ';'
    /// after expression`, `unexpected type name 'half': expected expression`): what follows
    /// from a name it did not know, when one is reported on the same line.
    pub fn is_syntax(&self) -> bool {
        ["expected ", "unexpected "]
            .iter()
            .any(|w| self.message.starts_with(w))
            && !self.is_name_lookup()
    }
}

/// The header a compiler's diagnostic says it cannot find: GCC's `fatal error:
/// register/tilingdata_base.h: No such file or directory` (in Chinese `致命错误：x.h：没有那个文件或目录`),
/// clang's `fatal error: 'x/y.h' file not found`.
pub fn missing_header(text: &str) -> Option<&str> {
    let header = |name: &str| {
        [".h", ".hpp", ".hh", ".hxx", ".inc", ".cuh"]
            .iter()
            .any(|e| name.ends_with(e))
    };
    let gcc = [": No such file or directory", "：没有那个文件或目录"]
        .iter()
        .find_map(|said| text.split_once(said))
        .and_then(|(before, _)| before.rsplit([' ', '：']).next());
    let clang = || {
        text.split_once(" file not found")
            .and_then(|(before, _)| before.rsplit(' ').next())
    };
    gcc.or_else(clang)
        .map(|name| {
            name.trim_end_matches(':')
                .trim_matches(['\'', '"', '‘', '’', '`'])
        })
        .filter(|name| header(name))
}

/// Whether the header a diagnostic cannot find ([`missing_header`]) comes from outside the
/// including file's tree — a toolkit's or a dependency's (`register/tilingdata_base.h` included
/// from `/root/xllm/third_party/…/pp_matmul_opt_tiling.h`): missing from the install the build
/// reads, an environment fault; so is one named by an absolute path outside the including file's
/// folder (`/usr/local/Ascend/…/acl.h`). A header under a folder the including file's own path
/// names (`core/framework/fence.h` from `onnxruntime/core/providers/cann/cann_fence.h`), and one
/// without a folder or relative to the including file (`utils.h`, `../inc/x.h`), are the
/// project's own, missing from its source: the code is wrong.
pub fn foreign_header(text: &str) -> bool {
    let Some(name) = missing_header(text) else {
        return false;
    };
    let includer = parse_diagnostic(text).and_then(|d| d.file).unwrap_or("");
    if name.starts_with('/') {
        let folder = includer.rsplit_once('/').map_or("", |(dir, _)| dir);
        return folder.is_empty() || !name.starts_with(folder);
    }
    let Some((top, _)) = name.split_once('/') else {
        return false;
    };
    !(top.starts_with('.') || includer.split('/').any(|part| part == top))
}

/// The severities as the compilers print them.
const SEVERITIES: &[(&str, Severity)] = &[
    ("fatal error: ", Severity::FatalError),
    ("error: ", Severity::Error),
    ("warning: ", Severity::Warning),
    ("note: ", Severity::Note),
    ("remark: ", Severity::Remark),
];

/// GCC's severities in its Simplified Chinese translation (its `zh_CN` catalogue, under a
/// `LANG=zh_CN.UTF-8` shell: `x.c:7:10: 致命错误：y.h：没有那个文件或目录`, a full-width colon and
/// no space). Chinese scripts write `错误：` for "Error:" too, so these count only where GCC's own
/// shape says it is GCC: a location with its column, or a GCC program's own line.
const SEVERITIES_ZH: &[(&str, Severity)] = &[
    ("致命错误：", Severity::FatalError),
    ("错误：", Severity::Error),
    ("警告：", Severity::Warning),
    ("附注：", Severity::Note),
];

/// `<severity>：<message>` in GCC's Chinese at the start of `s`.
fn severity_zh(s: &str) -> Option<(Severity, &str)> {
    SEVERITIES_ZH
        .iter()
        .find_map(|(lead, sev)| s.strip_prefix(lead).map(|m| (*sev, m.trim())))
}

/// Whether a program is GCC's driver or one of its passes (`gcc`, `x86_64-linux-gnu-g++-12`,
/// `cc1plus`, `collect2`).
fn is_gcc(name: &str) -> bool {
    // A version after the name (`g++-12`) comes off; `cc1` and `collect2` keep their digit.
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    ["gcc", "g++", "cc", "c++", "cc1", "cc1plus", "collect2"]
        .iter()
        .any(|g| {
            [name, base]
                .iter()
                .any(|n| n == g || n.ends_with(&format!("-{g}")))
        })
}

/// `<severity>: <message>` at the start of `s`.
fn severity_then_message(s: &str) -> Option<(Severity, &str)> {
    SEVERITIES.iter().find_map(|(lead, sev)| {
        s.strip_prefix(lead)
            .or_else(|| {
                // A message may be empty: `error:` at the end of the line.
                (s == lead.trim_end()).then_some("")
            })
            .map(|m| (*sev, m.trim()))
    })
}

/// Reads one line as a compiler diagnostic. Never panics; `None` for any other line.
pub fn parse_diagnostic(line: &str) -> Option<Diagnostic<'_>> {
    let t = line.trim();
    mlir(t)
        .or_else(|| clang(t))
        .or_else(|| tool(t))
        .or_else(|| linker(t))
        .or_else(|| tbe_dict(t))
}

/// What GNU ld says of a symbol at a place in an object (`x.cc:(.text+0x1a): undefined
/// reference to `f'`, `/usr/bin/ld: x.o:(.data+0x0): multiple definition of `g'`): always an
/// error, though it names no severity.
fn linker(t: &str) -> Option<Diagnostic<'_>> {
    // ld's `cannot find -l<name>` with its program's name cut from the paste: the `-l` option
    // names a library, and the line says nothing else (`: No such file or directory` at most).
    if let Some(lib) = t.strip_prefix("cannot find -l") {
        let lib = lib
            .strip_suffix(": No such file or directory")
            .unwrap_or(lib);
        if !lib.is_empty() && !lib.contains(char::is_whitespace) {
            return Some(link_error(t));
        }
    }
    // BFD's `%B: error adding symbols: %E` (an input it cannot read: `file in wrong format` for
    // a library built for another machine), also in ld's zh_CN messages.
    const SAYS: &[&str] = &[
        ": undefined reference to ",
        ": multiple definition of ",
        ": error adding symbols: ",
        ": 无法添加符号: ",
    ];
    SAYS.iter().find_map(|s| {
        let at = crate::needles::find(t, s)?;
        // The place: an object and its section (`x.o:(.text+0x1a)`), a source line of an
        // object built with debug information (`op.cc:42`), or an object after ld's own name
        // (`/usr/bin/ld: x.o`); nothing but ld's name before it.
        let (head, place) = t[..at].rsplit_once(' ').unwrap_or(("", &t[..at]));
        let placed = place.ends_with(')') || place.contains(['.', '/']);
        let led = head.is_empty() || head.strip_suffix(':').is_some_and(is_linker);
        (placed && led).then(|| link_error(&t[at + 2..]))
    })
}

/// Whether a program's path names a linker (GNU ld and its `ld.bfd` / `ld.gold`, LLVM's
/// `ld.lld`, a cross toolchain's `aarch64-linux-gnu-ld`).
fn is_linker(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    // `ld`, `ld.gold`, `aarch64-linux-gnu-ld.bfd`: the name before its variant.
    let base = name.split('.').next().unwrap_or(name);
    base == "ld" || base.ends_with("-ld")
}

/// A linker's error.
fn link_error(message: &str) -> Diagnostic<'_> {
    Diagnostic {
        form: Form::Linker,
        severity: Severity::Error,
        file: None,
        line: None,
        column: None,
        code: None,
        message,
    }
}

/// Triton's compilation errors that locate themselves in the kernel's source (`at L:C:`, the
/// source and a caret): `CompilationError` and its subclasses in `triton.compiler.errors`
/// (`UnsupportedLanguageConstruct`, `CompileTimeAssertionFailure`), by name or by module.
pub(crate) fn is_located_compile_error(type_name: &str) -> bool {
    type_name.starts_with("triton.compiler.errors.")
        || type_name.rsplit('.').next().is_some_and(|short| {
            short.ends_with("CompilationError")
                || short == "UnsupportedLanguageConstruct"
                || short == "CompileTimeAssertionFailure"
        })
}

/// Whether a line or message is the compiler driver's report that the link failed (gcc's
/// `collect2: error: ld returned 1 exit status`, clang's `linker command failed with exit
/// code 1`): a wrapper of the linker's own lines, which say what it lacked.
pub fn is_link_wrapper(text: &str) -> bool {
    let l = text.to_ascii_lowercase();
    l.starts_with("ld returned ")
        || l.contains(" ld returned ")
        || l.contains("ld 返回")
        || l.contains("linker command failed with exit code")
}

/// `loc(<balanced>): <severity>: <message>`.
fn mlir(t: &str) -> Option<Diagnostic<'_>> {
    let rest = t.strip_prefix("loc(")?;
    let close = balanced_end(rest)?;
    let location = &rest[..close];
    let after = rest[close + 1..].strip_prefix(": ")?;
    let (severity, message) = severity_then_message(after)?;
    let (file, line, column) = quoted_location(location).unwrap_or((None, None, None));
    Some(Diagnostic {
        form: Form::Mlir,
        severity,
        file,
        line,
        column,
        code: None,
        message,
    })
}

/// The byte index of the `)` that closes an opened `(` at the start of `s` (quotes honoured;
/// nesting at most 64 deep).
fn balanced_end(s: &str) -> Option<usize> {
    let mut depth = 0u32;
    let mut quoted = false;
    let mut escaped = false;
    for (i, b) in s.bytes().enumerate() {
        if quoted {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => quoted = true,
            b'(' | b'[' => {
                depth += 1;
                if depth > 64 {
                    return None;
                }
            }
            b')' | b']' if depth > 0 => depth -= 1,
            b')' => return Some(i),
            _ => {}
        }
    }
    None
}

type Location<'a> = (Option<&'a str>, Option<u32>, Option<u32>);

/// The first `"<file>":<line>:<col>` inside an MLIR location.
fn quoted_location(loc: &str) -> Option<Location<'_>> {
    let open = loc.find('"')?;
    let rest = &loc[open + 1..];
    let close = rest.find('"')?;
    let file = &rest[..close];
    let mut nums = rest[close + 1..].strip_prefix(':')?.splitn(3, ':');
    let line = nums.next().and_then(leading_number);
    let column = nums.next().and_then(leading_number);
    Some((Some(file), line, column))
}

fn leading_number(s: &str) -> Option<u32> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

/// `<path>:<line>[:<col>]: <severity>: <message>`.
fn clang(t: &str) -> Option<Diagnostic<'_>> {
    // The path ends at the first `:<digits>`; it holds no space.
    let mut from = 0;
    let (path_end, line, after_line) = loop {
        let at = from + t.get(from..)?.find(':')?;
        let digits = t[at + 1..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && digits <= 9 {
            let line: u32 = t[at + 1..at + 1 + digits].parse().ok()?;
            break (at, line, at + 1 + digits);
        }
        from = at + 1;
    };
    let path = &t[..path_end];
    // clang's names for text that is not in a file.
    let pseudo = ["<built-in>", "<command line>", "<stdin>", "<scratch space>"].contains(&path);
    if !pseudo
        && (path.is_empty()
            || path.contains(char::is_whitespace)
            || !(path.contains('/') || path.contains('.'))
            || path.starts_with(['[', '(', '<', '{']))
    {
        return None;
    }
    let mut rest = &t[after_line..];
    let mut column = None;
    if let Some(r) = rest.strip_prefix(':') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && digits <= 9 {
            column = r[..digits].parse().ok();
            rest = &r[digits..];
        }
    }
    let rest = rest.strip_prefix(": ")?;
    let (severity, message) =
        severity_then_message(rest).or_else(|| column.and_then(|_| severity_zh(rest)))?;
    Some(Diagnostic {
        form: Form::Clang,
        severity,
        file: Some(path),
        line: Some(line),
        column,
        code: None,
        message,
    })
}

/// Whether a line's head names a program: a path whose file name starts with a letter, a digit,
/// `_` or `.`, in lower case, of the characters paths of programs hold.
fn program_like(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    !name.is_empty()
        && name.len() <= 128
        && name.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && program
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._+-".contains(&b))
        && !name.bytes().any(|b| b.is_ascii_uppercase())
}

/// The message of argparse's error after `error: ` (CPython's `argparse.py`: `train.py: error:
/// unrecognized arguments: …`, `vllm: error: argument --x: invalid choice: …`,
/// `llamafactory-cli: error: ambiguous option: --split could match …`, `… one of the arguments
/// --a --b is required`, the option's own messages after `argument X: `).
fn argparse_message(rest: &str) -> Option<&str> {
    const STEMS: [&str; 5] = [
        "unrecognized argument",
        "the following arguments",
        "no such option",
        "ambiguous option",
        "one of the arguments",
    ];
    let m = rest.strip_prefix("error: ")?;
    // `argument` is argparse's only when an option or a name and a colon follow (`argument
    // --dtype: invalid choice`, `argument cmd: invalid choice`), not a sentence (`argument
    // 'input' (position 1) must be Tensor`).
    let option = |a: &str| {
        a.starts_with('-')
            || a.split_once(": ")
                .is_some_and(|(name, _)| !name.is_empty() && !name.contains(char::is_whitespace))
    };
    match m.strip_prefix("argument ") {
        Some(a) => option(a).then_some(m),
        None => STEMS.iter().any(|s| m.starts_with(s)).then_some(m),
    }
}

/// A command line's error as a program's argument parser prints it (`<prog>: error: <message>`
/// with one of argparse's messages): the message. The program refused how it was invoked — an
/// option of another release, a misspelt or ambiguous one, a required one missing. Words before
/// the program are the user's own (`报错：vllm: error: …`, `I got: train.py: error: …`).
pub fn argparse_error(t: &str) -> Option<&str> {
    let at = t.find(": error: ")?;
    let before = &t[..at];
    let program = before
        .rsplit(|c: char| c.is_whitespace() || matches!(c, '：' | '，' | ',' | ':'))
        .next()?
        .trim_start_matches(['`', '"', '\'', '(', '[']);
    program_like(program)
        .then(|| argparse_message(&t[at + 2..]))
        .flatten()
}

/// `<program>: <severity>: <message>`, or LLVM's option error `<program>: for the --<option>
/// option: <message>` (always an error; the message keeps the option).
fn tool(t: &str) -> Option<Diagnostic<'_>> {
    // `split_once(": ")`, without building a substring searcher for every line asked.
    let at = memchr::memchr_iter(b':', t.as_bytes())
        .find(|&i| t.as_bytes().get(i + 1) == Some(&b' '))?;
    let (program, rest) = (&t[..at], &t[at + 2..]);
    let name = program.rsplit('/').next().unwrap_or(program);
    if !program_like(program) {
        return None;
    }
    // A Python script's or launcher's argument parser prints the same shape: a command line,
    // not a build.
    if name.ends_with(".py") || argparse_message(rest).is_some() {
        return None;
    }
    // GNU ld states what it cannot do without a severity (`/usr/bin/ld: cannot find -lhccl`);
    // its warnings say `warning:`, read above.
    let linker = is_linker(program);
    let zh = || is_gcc(name).then(|| severity_zh(rest)).flatten();
    let (severity, message) = match severity_then_message(rest).or_else(zh) {
        Some(found) => found,
        None if linker
            && (rest.starts_with("cannot find ") || rest.starts_with("cannot open ")) =>
        {
            return Some(link_error(rest));
        }
        None => {
            let option = rest.strip_prefix("for the ")?;
            let (name, _) = option.split_once(" option: ")?;
            if name.is_empty() || !name.starts_with('-') || name.contains(char::is_whitespace) {
                return None;
            }
            (Severity::Error, rest)
        }
    };
    Some(Diagnostic {
        form: if linker { Form::Linker } else { Form::Tool },
        severity,
        file: None,
        line: None,
        column: None,
        code: None,
        message,
    })
}

/// A TBE / TIK compile error: a Python dict with an `errCode` key, printed alone or inside the
/// exception that raised it (`RuntimeError: ({'errCode': 'E90003', …}, '<message>')`).
fn tbe_dict(t: &str) -> Option<Diagnostic<'_>> {
    // Both spellings hold the word: one prebuilt search rules out almost every line.
    static ERR_CODE: LazyLock<Needles> = LazyLock::new(|| Needles::new(["errCode"]));
    if !ERR_CODE.any_in(t) {
        return None;
    }
    let key = ["'errCode': '", "\"errCode\": \""]
        .iter()
        .find_map(|k| t.find(k).map(|at| at + k.len()))?;
    let rest = &t[key..];
    let end = rest.find(['\'', '"'])?;
    let code = &rest[..end];
    if code.is_empty() || code.len() > 16 || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let message = ["'message': '", "'detailed_cause': '"]
        .iter()
        .find_map(|k| {
            let at = t.find(k)? + k.len();
            let m = &t[at..];
            Some(&m[..m.find('\'').unwrap_or(m.len())])
        })
        .unwrap_or(t);
    Some(Diagnostic {
        form: Form::TbeDict,
        severity: Severity::Error,
        file: None,
        line: None,
        column: None,
        code: Some(code),
        message,
    })
}

/// Phrases of the lines that say a compile pipeline, tool or stage failed without saying why
/// (lower case). The diagnostic before or after them says why.
const WRAPPERS: &[&str] = &[
    // Triton-Ascend and the Inductor / torch_npu Inductor backends.
    "triton compilation failed",
    "encounters error:",
    "[error][triton][beg]",
    "[error][tritonascend][beg]",
    // AscendC's compile driver and GE's operator build.
    "an error occurred during compile phases",
    "errors occurred during compile phase",
    "please check op's compilation error message",
    // ATC.
    "atc run failed",
];

/// Exception types that carry a compiler's output without stating a cause of their own.
const WRAPPER_EXCEPTIONS: &[&str] = &["MLIRCompilationError", "HuaweiCompilationError"];

/// Whether a line or message only says that a compile pipeline, tool or stage failed.
pub fn is_compile_wrapper(text: &str) -> bool {
    let l = text.to_ascii_lowercase();
    // bishengir-compile: `Failed to run BiShengHIR pipeline`, `… BiShengIR regbase pipeline`.
    if l.contains("failed to run bisheng") && l.contains("pipeline") {
        return true;
    }
    static ANY: LazyLock<Needles> = LazyLock::new(|| Needles::new(WRAPPERS.iter().copied()));
    ANY.any_in(&l) || is_link_wrapper(text)
}

/// The diagnostic a compile wrapper quotes: AscendC's compile driver prints the compiler's first
/// line after `msg is ` (`An error occurred during compile phases of CompileStage.PRECOMPILE,
/// msg is <built-in>:1:10: fatal error: …`).
pub fn wrapped_diagnostic(text: &str) -> Option<Diagnostic<'_>> {
    const QUOTES: &str = "msg is ";
    let at = crate::needles::find(text, QUOTES)?;
    if !is_compile_wrapper(&text[..at]) {
        return None;
    }
    parse_diagnostic(&text[at + QUOTES.len()..])
}

/// A CMake error (`CMake Error at <file>:<line> (<command>):`, `CMake Error: <message>`, the
/// forms of CMake's `message(FATAL_ERROR | SEND_ERROR …)` and its own errors; `CMake Error at
/// <file>:<line>:` without a command, as a parse error of the file is reported; `CMake Error in
/// <file>:`, an error found at generate time): `Some(message)` when the message is on the line,
/// `Some("")` when it follows on the indented lines below.
pub fn cmake_error(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("CMake Error")?;
    if let Some(at) = rest.strip_prefix(" at ") {
        let numbered = at
            .strip_suffix(':')
            .and_then(|a| a.rsplit_once(':'))
            .is_some_and(|(file, n)| {
                !file.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
            });
        return (at.ends_with("):") || numbered).then_some("");
    }
    if let Some(file) = rest.strip_prefix(" in ") {
        return (file.len() > 1 && file.ends_with(':')).then_some("");
    }
    rest.strip_prefix(": ").map(str::trim)
}

/// Whether a Python exception type (dotted or not) wraps a compiler's output.
pub fn is_wrapper_exception(type_name: &str) -> bool {
    let short = type_name.rsplit('.').next().unwrap_or(type_name);
    WRAPPER_EXCEPTIONS.contains(&short)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines written from each format's documentation (MLIR, clang, TBE), not copied from a sample.
    #[test]
    fn mlir_locations() {
        let d = parse_diagnostic(
            "loc(\"/tmp/k/kernel.ttadapter.mlir\":3:3): error: ub overflow, requires 2 bits while 1 bits available!",
        )
        .unwrap();
        assert_eq!(
            (d.form, d.severity, d.file, d.line, d.column),
            (
                Form::Mlir,
                Severity::Error,
                Some("/tmp/k/kernel.ttadapter.mlir"),
                Some(3),
                Some(3)
            )
        );
        assert!(d.message.starts_with("ub overflow"));
        let d =
            parse_diagnostic("loc(callsite(\"a.py\":1:2 at \"b.py\":3:4)): warning: w").unwrap();
        assert_eq!(
            (d.severity, d.file, d.line),
            (Severity::Warning, Some("a.py"), Some(1))
        );
        let d = parse_diagnostic("loc(unknown): error: Failed to run BiShengHIR pipeline").unwrap();
        assert_eq!((d.file, d.line), (None, None));
        assert!(is_compile_wrapper(d.message));
        let d = parse_diagnostic("loc(fused[\"x.mlir\":1:1, \"y\"]): remark: r").unwrap();
        assert_eq!(d.severity, Severity::Remark);
        assert!(parse_diagnostic("loc(\"x\":1:1) error: no colon").is_none());
        assert!(parse_diagnostic("loc(\"unterminated").is_none());
    }

    #[test]
    fn clang_lines() {
        let d =
            parse_diagnostic("/src/op_kernel/add.cpp:24:10: fatal error: 'cstdint' file not found")
                .unwrap();
        assert_eq!(
            (d.form, d.severity, d.file, d.line, d.column, d.message),
            (
                Form::Clang,
                Severity::FatalError,
                Some("/src/op_kernel/add.cpp"),
                Some(24),
                Some(10),
                "'cstdint' file not found"
            )
        );
        let d = parse_diagnostic("kernel.py:20:35: error: operand #0 does not dominate this use")
            .unwrap();
        assert!(d.severity.is_error());
        let d = parse_diagnostic("a.c:7: error: no column").unwrap();
        assert_eq!((d.line, d.column), (Some(7), None));
        // GCC in Simplified Chinese (wider-world batch 26).
        let d = parse_diagnostic("onnxruntime/core/providers/cann/cann_fence.h:7:10: 致命错误：core/framework/fence.h：没有那个文件或目录").unwrap();
        assert_eq!(
            (d.severity, d.line, d.message),
            (
                Severity::FatalError,
                Some(7),
                "core/framework/fence.h：没有那个文件或目录"
            )
        );
        let d = parse_diagnostic("x.cc:3:1: 错误：‘f’在此作用域中尚未声明").unwrap();
        assert_eq!(d.severity, Severity::Error);
        let d = parse_diagnostic("x.cc:3:1: 警告：未使用的变量‘y’").unwrap();
        assert!(!d.severity.is_error());
        let d = parse_diagnostic("collect2: 错误：ld 返回 1").unwrap();
        assert!(d.severity.is_error() && is_link_wrapper(d.message));
        // A Chinese script's own `错误：` is not GCC's: no column, not a GCC program.
        for line in [
            "a.py:12: 错误：数据集路径不存在",
            "install.sh: 错误：未找到 CANN",
        ] {
            assert!(parse_diagnostic(line).is_none(), "{line}");
        }
        let d = parse_diagnostic("<built-in>:1:10: fatal error: 'w.h' file not found").unwrap();
        assert_eq!(
            (d.file, d.line, d.column),
            (Some("<built-in>"), Some(1), Some(10))
        );
        assert!(parse_diagnostic("<command line>:2:9: error: macro redefined").is_some());
        assert!(parse_diagnostic("<frozen importlib>:1:2: error: x").is_none());
        assert!(!parse_diagnostic("x.py:1:2: note: see current operation")
            .unwrap()
            .severity
            .is_error());
        for other in [
            "In file included from a.h:3:",
            "RuntimeError: error: x",
            "[core.py:868] error: y",
            "ERROR:torch_npu._inductor.config:Triton compilation failed: k",
            "at 12:4: error",
            "2 errors generated.",
            "",
            ":1:2: error: no path",
        ] {
            assert!(parse_diagnostic(other).is_none(), "{other}");
        }
    }

    // LLVM's formats: `WithColor::error` (`<program>: error: …`) and `cl::Option::error`
    // (`<program>: for the --<option> option: …`, here an enum value the option does not list).
    #[test]
    fn tool_lines() {
        let d = parse_diagnostic("clang: error: unknown argument: '-mfoo'").unwrap();
        assert_eq!(
            (d.form, d.severity, d.file, d.message),
            (
                Form::Tool,
                Severity::Error,
                None,
                "unknown argument: '-mfoo'"
            )
        );
        let d = parse_diagnostic(
            "/opt/Ascend/bin/bishengir-compile: for the --target option: Cannot find option named 'X1'!",
        )
        .unwrap();
        assert_eq!(
            (d.form, d.severity, d.message),
            (
                Form::Tool,
                Severity::Error,
                "for the --target option: Cannot find option named 'X1'!"
            )
        );
        assert!(
            parse_diagnostic("opt: for the -O option: may only occur zero or one times!")
                .is_some_and(|d| d.severity.is_error())
        );
        assert!(!parse_diagnostic("ld.lld: warning: x")
            .unwrap()
            .severity
            .is_error());
        for other in [
            "ValueError: error: not a tool",
            "Note: for the --x option: y",
            "tool: for the option: no name",
            "tool: for the x option: not an option",
            "two words: error: x",
            "-: error: x",
            "train.py: error: unrecognized arguments: --foo",
            "vllm: error: argument --tensor-parallel-size: invalid int value: 'x'",
            "torchrun: error: the following arguments are required: training_script",
            // Batch 41: argparse's abbreviation check.
            "llamafactory-cli: error: ambiguous option: --split could match --split_special_tokens, --split-special-tokens",
            "prog: error: one of the arguments --a --b is required",
        ] {
            assert!(parse_diagnostic(other).is_none(), "{other}");
        }
    }

    #[test]
    fn tbe_dicts() {
        let d = parse_diagnostic("RuntimeError: ({'errCode': 'E90003', 'detailed_cause': 'bf16 of x is not supported'}, 'Compile operator failed')").unwrap();
        assert_eq!(
            (d.form, d.code, d.message),
            (Form::TbeDict, Some("E90003"), "bf16 of x is not supported")
        );
        let d =
            parse_diagnostic("{'errCode': 'E80012', 'op_name': 'reduce_sum_d', 'real_value': 10}")
                .unwrap();
        assert_eq!(d.code, Some("E80012"));
        assert!(parse_diagnostic("{'errCode': ''}").is_none());
        assert!(parse_diagnostic("{'errCode': 'E8 has spaces'}").is_none());
    }

    #[test]
    fn wrappers() {
        for w in [
            "Failed to run BiShengHIR pipeline",
            "[ERROR] Failed to run BiShengIR regbase pipeline",
            "ERROR:torch_npu._inductor.config:Triton compilation failed: triton_k_0",
            "[ConvertLinalgIRToBinary] encounters error:",
            "ATC run failed, Please check the detail log, Try 'atc --help' for more information",
            "Exception: An error occurred during compile phases of CompileStage.COMPILE, msg is x",
        ] {
            assert!(is_compile_wrapper(w), "{w}");
        }
        assert!(!is_compile_wrapper("ub overflow, requires 2 bits"));
        let quoted = "Exception: An error occurred during compile phases of CompileStage.PRECOMPILE, msg is <built-in>:1:10: fatal error: 'w.h' file not found";
        assert_eq!(
            wrapped_diagnostic(quoted).map(|d| (d.severity, d.message)),
            Some((Severity::FatalError, "'w.h' file not found"))
        );
        assert!(wrapped_diagnostic("ValueError: msg is a.c:1:2: error: not a wrapper").is_none());
        assert!(is_wrapper_exception(
            "triton.compiler.errors.MLIRCompilationError"
        ));
        assert!(!is_wrapper_exception("CompilationError"));
    }

    // GNU ld's own lines (binutils ldmisc.c), and the driver's line after them, a wrapper.
    #[test]
    fn linker_errors() {
        let d = parse_diagnostic("/usr/bin/ld: cannot find -lhccl").unwrap();
        assert_eq!(
            (d.form, d.severity, d.message),
            (Form::Linker, Severity::Error, "cannot find -lhccl")
        );
        let d = parse_diagnostic(
            "aarch64-linux-gnu-ld: cannot open output file a.so: Permission denied",
        )
        .unwrap();
        assert!(d.severity.is_error());
        let d = parse_diagnostic("op.cc:(.text+0x1a): undefined reference to `aclInit'").unwrap();
        assert_eq!(d.message, "undefined reference to `aclInit'");
        let d =
            parse_diagnostic("/usr/bin/ld: a.o:(.bss+0x0): multiple definition of `g'").unwrap();
        assert!(d.severity.is_error());
        assert_eq!(
            parse_diagnostic("/usr/bin/ld: warning: libx.so, needed by liby.so, not found")
                .map(|d| d.severity),
            Some(Severity::Warning)
        );
        assert!(parse_diagnostic("/usr/bin/ld: a.o: in function `main':").is_none());
        assert!(parse_diagnostic("the doc says: undefined reference to `f'").is_none());
        // An input ld cannot read, in English and in its zh_CN messages.
        for (line, message) in [
            (
                "/usr/bin/ld: /opt/lib/libascendcl.so: error adding symbols: file in wrong format",
                "error adding symbols: file in wrong format",
            ),
            (
                "/home/u/Ascend/ascend-toolkit/latest/acllib/lib64/libascendcl.so: 无法添加符号: 文件格式错误",
                "无法添加符号: 文件格式错误",
            ),
        ] {
            let d = parse_diagnostic(line).unwrap();
            assert_eq!((d.form, d.severity, d.message), (Form::Linker, Severity::Error, message));
        }
        assert!(parse_diagnostic("the notes say: error adding symbols: x").is_none());
        assert!(parse_diagnostic("tools: cannot find -lx").is_none());
        // A header not found (wider-world batch 29): GCC, clang, GCC in Chinese; a source file
        // or a data file is no header.
        for line in [
            "/a/b_tiling.h:16:10: fatal error: register/tilingdata_base.h: No such file or directory",
            "/a/k.cpp:22:10: fatal error: 'inner_interface/inner_kernel_operator_intf.h' file not found",
            "x.cc:1:10: 致命错误：acl/acl.h：没有那个文件或目录",
            "/src/op/add.cpp:3:10: fatal error: /usr/local/Ascend/include/acl/acl.h: No such file or directory",
        ] {
            assert!(foreign_header(line), "{line}");
        }
        for line in [
            "gcc: error: main.cc: No such file or directory",
            "error: 'weights.bin' file not found",
            "x.cc:3:5: error: 'f' was not declared in this scope",
            // The project's own header, gone from its source (wider-world batch 26); one without
            // a folder or relative to the includer.
            "onnxruntime/core/providers/cann/cann_fence.h:7:10: 致命错误：core/framework/fence.h：没有那个文件或目录",
            "op/add.cpp:3:10: fatal error: add_custom_tiling.h: No such file or directory",
            "op/add.cpp:3:10: fatal error: ../inc/x.h: No such file or directory",
            "/src/op/add.cpp:3:10: fatal error: /src/op/gen/x.h: No such file or directory",
        ] {
            assert!(!foreign_header(line), "{line}");
        }
        // Its program's name cut from the paste (wider-world batch 29).
        assert_eq!(
            parse_diagnostic("cannot find -lnpu_hccl").map(|d| (d.form, d.message)),
            Some((Form::Linker, "cannot find -lnpu_hccl"))
        );
        assert!(parse_diagnostic("cannot find -l option in the manual").is_none());
        assert!(parse_diagnostic("cannot find -l").is_none());
        assert!(is_compile_wrapper(
            "collect2: error: ld returned 1 exit status"
        ));
        assert!(is_link_wrapper(
            "collect2: error: ld returned 1 exit status"
        ));
        // What the diagnostic's message is after its severity, too.
        assert!(is_link_wrapper("ld returned 1 exit status"));
        assert!(!is_link_wrapper("the docker build returned 1"));
        assert!(
            parse_diagnostic("aarch64-linux-gnu-ld.bfd: cannot find -lhccl")
                .is_some_and(|d| d.form == Form::Linker)
        );
        for line in [
            "ld.lld: error: unable to find library -lhccl",
            "/usr/bin/ld.gold: error: cannot find -lhccl",
            "/src/op.cc:42: undefined reference to `aclInit'",
            "/usr/bin/ld: x.o: undefined reference to symbol 'dlsym@@GLIBC_2.2.5'",
        ] {
            let d = parse_diagnostic(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(
                (d.form, d.severity.is_error()),
                (Form::Linker, true),
                "{line}"
            );
        }
        assert!(parse_diagnostic("see the notes: undefined reference to `f'").is_none());
        assert!(is_compile_wrapper(
            "clang: error: linker command failed with exit code 1 (use -v to see invocation)"
        ));
    }

    #[test]
    fn cmake_errors() {
        assert_eq!(
            cmake_error("CMake Error at cmake/host_config.cmake:20 (message):"),
            Some("")
        );
        assert_eq!(
            cmake_error("CMake Error: The source directory does not exist."),
            Some("The source directory does not exist.")
        );
        assert_eq!(
            cmake_error("CMake Error at cmake/generic.cmake:1:"),
            Some("")
        );
        assert_eq!(cmake_error("CMake Error in CMakeLists.txt:"), Some(""));
        assert_eq!(cmake_error("CMake Error at a.cmake:1"), None);
        assert_eq!(cmake_error("CMake Error at a.cmake:x:"), None);
        assert_eq!(cmake_error("CMake Error at :1:"), None);
        assert_eq!(cmake_error("CMake Error in :"), None);
        assert_eq!(cmake_error("CMake Warning at a.cmake:1 (message):"), None);
    }

    // The worst line in the world: no panic, bounded nesting.
    #[test]
    fn hostile_lines() {
        let deep = format!("loc({}): error: x", "(".repeat(10_000));
        assert!(parse_diagnostic(&deep).is_none());
        let colons = ":".repeat(100_000);
        assert!(parse_diagnostic(&colons).is_none());
        assert!(parse_diagnostic("a/b:99999999999999: error: big").is_none());
        assert!(parse_diagnostic("é/ü.c:1:1: error: ünïcode").is_some());
        assert!(parse_diagnostic("{'errCode': 'E8").is_none());
    }
}
