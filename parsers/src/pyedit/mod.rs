//! Syntax-aware, minimal edits of the `torch.compile(...)` call in a Python script.
//!
//! The layered triage runs one user script five times, each time with the selected compile
//! call changed in one precise way (spec `triage-and-repro.md` §1.1, "compile-kwargs
//! inheritance"):
//!
//! | step | edit |
//! |---|---|
//! | 1 eager | the call becomes its first positional argument (`compiled = model`); a decorator is removed; `model.compile(...)` is removed |
//! | 2 / 3 | `backend` becomes `"eager"` / `"aot_eager"` (added if absent); `options` is dropped, the dropped keys are reported |
//! | 4 force_eager | `options` is shallow-merged with `"force_eager": True` (literal dict: the key is added or its value set; other expressions: `{**expr, "force_eager": True}`; absent: `options={"force_eager": True}` is added) |
//! | 5 | the original call, unchanged |
//!
//! The script is parsed with tree-sitter-python; every edit is a byte-range replacement inside
//! the selected call (or, for step 1, the call expression, its decorator line or its statement),
//! so comments, formatting and every other byte of the file stay as they were.
//!
//! Recognised compile calls: `torch.compile(...)` under any `import torch as X` alias,
//! `compile(...)` after `from torch import compile [as X]`, the same as decorators (with or
//! without arguments), and `obj.compile(...)` method calls that carry only torch.compile keyword
//! arguments (`nn.Module.compile`). Calls inside helper or factory functions are found where
//! they are, and edited there.
//!
//! Pure: source text in, edited text out. No filesystem, no printing, never panics.

use std::fmt;

use tree_sitter::{Node, Parser, Tree};

use syntax::*;

mod syntax;

/// Keyword arguments of `torch.compile`; a `.compile(...)` method call whose keywords are all
/// from this set (and that has no positional argument) is taken as `nn.Module.compile`.
const COMPILE_KWARGS: &[&str] = &[
    "backend",
    "fullgraph",
    "dynamic",
    "mode",
    "options",
    "disable",
];

/// The backend npgx triages.
pub const NPUGRAPH_EX: &str = "npugraph_ex";

/// How the compile call appears in the script.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CallForm {
    /// `torch.compile(model, ...)` used as an expression.
    Call,
    /// `@torch.compile(...)` above a function definition.
    Decorator,
    /// `@torch.compile` without arguments.
    BareDecorator,
    /// `model.compile(...)` (`nn.Module.compile`, compiles in place).
    ModuleMethod,
}

/// The backend argument as written.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(tag = "kind", content = "text", rename_all = "snake_case")]
pub enum BackendArg {
    /// A string literal; the text is the literal's content (`npugraph_ex`).
    Literal(String),
    /// Any other expression, as written (`cfg.backend`).
    Expression(String),
    /// No backend argument (PyTorch's default, inductor).
    Default,
}

impl BackendArg {
    /// Whether this names the npugraph_ex backend literally.
    pub fn is_npugraph_ex(&self) -> bool {
        matches!(self, BackendArg::Literal(s) if s == NPUGRAPH_EX)
    }
}

/// One compile call found in a script.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct CompileCall {
    /// 1-based position among the compile calls of the file, in source order (`--call N`).
    pub ordinal: usize,
    /// 1-based line where the call (or decorator) starts.
    pub line: usize,
    pub form: CallForm,
    /// The callee as written: `torch.compile`, `t.compile`, `compile`, `self.model.compile`.
    pub callee: String,
    pub backend: BackendArg,
    /// The innermost enclosing `def`, when the call sits in a helper or factory function.
    pub enclosing_function: Option<String>,
    /// The whole call (or decorator expression) as written, for listings.
    pub text: String,
    #[serde(skip)]
    start: usize,
    #[serde(skip)]
    end: usize,
}

/// The five triage steps, as edits of the compile call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEdit {
    /// Step 1: no compile at all.
    Eager,
    /// Steps 2 and 3: another backend (`eager` / `aot_eager`), backend options dropped.
    Backend(&'static str),
    /// Step 4: `force_eager: True` merged into the options.
    ForceEager,
    /// Step 5: the original call.
    Original,
}

/// What happened to the user's `options` in one rewrite.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum OptionsChange {
    /// The call has no `options` and none was needed.
    Absent,
    /// `options` was left as written.
    Kept,
    /// `options` was dropped. `keys` lists the literal keys (empty when not a literal dict);
    /// `text` is the dropped expression as written.
    Dropped { keys: Vec<String>, text: String },
    /// `force_eager: True` was merged in; `into` says how.
    Merged { into: MergeTarget },
}

/// Where `force_eager` went in step 4.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MergeTarget {
    /// Added to the user's literal dict.
    LiteralDict,
    /// The user's literal dict had `force_eager`; its value was set to `True`.
    ReplacedValue,
    /// The user's options are an expression: `{**expr, "force_eager": True}`.
    SpreadExpression,
    /// The call had no options: `options={"force_eager": True}` was added.
    NewArgument,
}

/// The edited script and what was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pub text: String,
    pub options: OptionsChange,
}

/// Further edits made together with a step's edit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    /// Wrap the step's callable as `«wrapper»(…)` (see [`Script::rewrite_wrapped`]).
    pub wrapper: Option<&'a str>,
    /// `(key, Python expression)` pairs merged into the call's `options` dict (steps 4 and 5
    /// only; a key already in a literal dict gets the new value).
    pub options: &'a [(String, String)],
    /// Statements inserted at the top of the module: after the docstring and any
    /// `from __future__` imports, before every other statement.
    pub prelude: Option<&'a str>,
}

/// The call's `options` as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionsSource {
    /// No `options` argument.
    Absent,
    /// A literal dict: `(key, value as written)` for every string-keyed pair. `splat` is true when
    /// the dict also spreads another mapping (`{**base, ...}`), whose keys are unknown.
    Literal {
        entries: Vec<(String, String)>,
        splat: bool,
    },
    /// Any other expression, as written.
    Expression(String),
}

/// Why a script cannot be rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PyEditError {
    /// tree-sitter found a syntax error (1-based line and column).
    Syntax { line: usize, column: usize },
    /// The script has no recognisable compile call.
    NoCompileCall,
    /// Several calls qualify; the caller must pick one with `--call N`.
    Ambiguous(Vec<CompileCall>),
    /// `--call N` is out of range.
    NoSuchCall { requested: usize, available: usize },
    /// Output capture (`--compare-outputs`) needs `x = torch.compile(model, ...)`.
    CaptureUnsupported(CallForm),
    /// The parser itself could not run (never expected with a bundled grammar).
    Parser(String),
}

impl fmt::Display for PyEditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyEditError::Syntax { line, column } => {
                write!(f, "Python syntax error at line {line}, column {column}")
            }
            PyEditError::NoCompileCall => write!(
                f,
                "no torch.compile(...) call, @torch.compile decorator or module.compile(...) call found"
            ),
            PyEditError::Ambiguous(calls) => {
                write!(
                    f,
                    "{} compile calls and none (or more than one) uses backend=\"{NPUGRAPH_EX}\"; pick one with --call N:",
                    calls.len()
                )?;
                for c in calls {
                    write!(f, "\n  {}: line {}: {}", c.ordinal, c.line, first_line(&c.text))?;
                }
                Ok(())
            }
            PyEditError::NoSuchCall {
                requested,
                available,
            } => write!(
                f,
                "--call {requested} is out of range: the script has {available} compile call(s)"
            ),
            PyEditError::CaptureUnsupported(form) => write!(
                f,
                "output capture needs a call of the form `x = torch.compile(model, ...)`; the selected call is a {form:?}"
            ),
            PyEditError::Parser(msg) => write!(f, "Python parser unavailable: {msg}"),
        }
    }
}

impl std::error::Error for PyEditError {}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// A parsed script: the source and its syntax tree.
pub struct Script<'s> {
    src: &'s str,
    tree: Tree,
}

impl<'s> Script<'s> {
    /// Parses `src`; a syntax error is an error (tree-sitter would otherwise recover silently).
    pub fn parse(src: &'s str) -> Result<Self, PyEditError> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .map_err(|e| PyEditError::Parser(e.to_string()))?;
        let tree = parser
            .parse(src, None)
            .ok_or_else(|| PyEditError::Parser("parse was cancelled".into()))?;
        if tree.root_node().has_error() {
            let bad = first_error(tree.root_node()).unwrap_or(tree.root_node());
            let p = bad.start_position();
            return Err(PyEditError::Syntax {
                line: p.row + 1,
                column: p.column + 1,
            });
        }
        Ok(Script { src, tree })
    }

    /// Every compile call of the file, in source order.
    pub fn compile_calls(&self) -> Vec<CompileCall> {
        let aliases = Aliases::collect(self.tree.root_node(), self.src);
        let mut found = Vec::new();
        walk(self.tree.root_node(), &mut |node| {
            if let Some(call) = self.recognise(node, &aliases) {
                found.push(call);
            }
        });
        found.sort_by_key(|c| c.start);
        for (i, c) in found.iter_mut().enumerate() {
            c.ordinal = i + 1;
        }
        found
    }

    /// Picks the call to edit: `--call N` if given; otherwise the single call whose backend is
    /// the literal `"npugraph_ex"`, or the only call of the file.
    pub fn select(&self, requested: Option<usize>) -> Result<CompileCall, PyEditError> {
        let calls = self.compile_calls();
        if calls.is_empty() {
            return Err(PyEditError::NoCompileCall);
        }
        if let Some(n) = requested {
            return calls
                .get(n.wrapping_sub(1))
                .cloned()
                .ok_or(PyEditError::NoSuchCall {
                    requested: n,
                    available: calls.len(),
                });
        }
        if calls.len() == 1 {
            return Ok(calls[0].clone());
        }
        let npu: Vec<&CompileCall> = calls
            .iter()
            .filter(|c| c.backend.is_npugraph_ex())
            .collect();
        match npu.as_slice() {
            [one] => Ok((*one).clone()),
            _ => Err(PyEditError::Ambiguous(calls)),
        }
    }

    /// The script with `call` edited for `step`.
    pub fn rewrite(&self, call: &CompileCall, step: StepEdit) -> Result<Rewrite, PyEditError> {
        self.rewrite_with(call, step, Extras::default())
    }

    /// The `options` argument of `call` as written.
    pub fn options_of(&self, call: &CompileCall) -> OptionsSource {
        let src = self.src;
        let Some(node) = self.node_of(call) else {
            return OptionsSource::Absent;
        };
        let Some(value) = self
            .call_args(node, call.form)
            .and_then(|a| keyword(a, "options", src))
        else {
            return OptionsSource::Absent;
        };
        if value.kind() != "dictionary" {
            return OptionsSource::Expression(text(value, src).to_string());
        }
        let mut entries = Vec::new();
        let mut splat = false;
        let mut cursor = value.walk();
        for c in value.named_children(&mut cursor) {
            match c.kind() {
                "pair" => {
                    let key = c
                        .child_by_field_name("key")
                        .and_then(|k| string_literal(k, src));
                    let val = c.child_by_field_name("value");
                    if let (Some(k), Some(v)) = (key, val) {
                        entries.push((k, text(v, src).to_string()));
                    }
                }
                "dictionary_splat" => splat = true,
                _ => {}
            }
        }
        OptionsSource::Literal { entries, splat }
    }

    fn node_of(&self, call: &CompileCall) -> Option<Node<'_>> {
        self.tree
            .root_node()
            .descendant_for_byte_range(call.start, call.end)
            .and_then(|n| climb_to_range(n, call.start, call.end))
    }

    /// As [`Script::rewrite`], and the step's callable (the compiled model, or the model itself in
    /// step 1) wrapped as `«wrapper»(…)`, so its calls can be observed (`--compare-outputs`).
    /// Only the `x = torch.compile(model, ...)` form can be wrapped this way.
    pub fn rewrite_wrapped(
        &self,
        call: &CompileCall,
        step: StepEdit,
        wrapper: &str,
    ) -> Result<Rewrite, PyEditError> {
        self.rewrite_with(
            call,
            step,
            Extras {
                wrapper: Some(wrapper),
                ..Extras::default()
            },
        )
    }

    /// The script with `call` edited for `step` and the `extras` applied. Extra options need
    /// step 4 or step 5 (the steps that keep `options`); other steps ignore them.
    pub fn rewrite_with(
        &self,
        call: &CompileCall,
        step: StepEdit,
        extras: Extras<'_>,
    ) -> Result<Rewrite, PyEditError> {
        let node = self.node_of(call).ok_or(PyEditError::NoCompileCall)?;
        let mut edits = Edits::default();
        let options = match step {
            StepEdit::Original if extras.options.is_empty() => {
                options_state(self.call_args(node, call.form), self.src)
            }
            StepEdit::Original => self.merge_options(node, call.form, extras.options, &mut edits),
            StepEdit::Eager => {
                self.unwrap_call(node, call.form, &mut edits);
                match self.call_args(node, call.form) {
                    Some(args) => match keyword(args, "options", self.src) {
                        Some(v) => OptionsChange::Dropped {
                            keys: dict_keys(v, self.src),
                            text: text(v, self.src).to_string(),
                        },
                        None => OptionsChange::Absent,
                    },
                    None => OptionsChange::Absent,
                }
            }
            StepEdit::Backend(name) => self.swap_backend(node, call.form, name, &mut edits),
            StepEdit::ForceEager => {
                let mut pairs = vec![("force_eager".to_string(), "True".to_string())];
                pairs.extend(
                    extras
                        .options
                        .iter()
                        .filter(|(k, _)| k != "force_eager")
                        .cloned(),
                );
                self.merge_options(node, call.form, &pairs, &mut edits)
            }
        };
        if let Some(p) = extras.prelude {
            let at = self.prelude_offset();
            let mut text = p.trim_end_matches('\n').to_string();
            text.push('\n');
            edits.insert(at, text);
        }
        if let Some(w) = extras.wrapper {
            let has_model = call.form == CallForm::Call
                && node.child_by_field_name("arguments").is_some_and(|a| {
                    positional(a, 0).is_some() || keyword(a, "model", self.src).is_some()
                });
            if !has_model {
                return Err(PyEditError::CaptureUnsupported(call.form));
            }
            edits.insert(node.start_byte(), format!("{w}("));
            edits.insert(node.end_byte(), ")".into());
        }
        Ok(Rewrite {
            text: edits.apply(self.src),
            options,
        })
    }

    fn recognise(&self, node: Node<'_>, aliases: &Aliases) -> Option<CompileCall> {
        let src = self.src;
        let (form, callee, args, whole) = match node.kind() {
            "call" => {
                let func = node.child_by_field_name("function")?;
                let args = node.child_by_field_name("arguments")?;
                if args.kind() != "argument_list" {
                    return None;
                }
                let in_decorator = node.parent().is_some_and(|p| p.kind() == "decorator");
                if aliases.is_torch_compile(func, src) {
                    let form = if in_decorator {
                        CallForm::Decorator
                    } else {
                        CallForm::Call
                    };
                    (form, func, Some(args), node)
                } else if func.kind() == "attribute"
                    && func
                        .child_by_field_name("attribute")
                        .is_some_and(|a| text(a, src) == "compile")
                    && is_module_compile_args(args, src)
                {
                    (CallForm::ModuleMethod, func, Some(args), node)
                } else {
                    return None;
                }
            }
            "decorator" => {
                let expr = node.named_child(0)?;
                if expr.kind() == "call" || !aliases.is_torch_compile(expr, src) {
                    return None;
                }
                (CallForm::BareDecorator, expr, None, expr)
            }
            _ => return None,
        };
        let backend = match args.and_then(|a| backend_arg(a, form, src)) {
            Some(v) => match string_literal(v, src) {
                Some(s) => BackendArg::Literal(s),
                None => BackendArg::Expression(text(v, src).to_string()),
            },
            None => BackendArg::Default,
        };
        let anchor = if form == CallForm::Decorator || form == CallForm::BareDecorator {
            whole.parent().unwrap_or(whole)
        } else {
            whole
        };
        Some(CompileCall {
            ordinal: 0,
            line: anchor.start_position().row + 1,
            form,
            callee: text(callee, src).to_string(),
            backend,
            enclosing_function: enclosing_function(whole, src),
            text: text(anchor, src).to_string(),
            start: whole.start_byte(),
            end: whole.end_byte(),
        })
    }

    fn call_args<'t>(&self, node: Node<'t>, form: CallForm) -> Option<Node<'t>> {
        match form {
            CallForm::BareDecorator => None,
            _ => node.child_by_field_name("arguments"),
        }
    }

    /// Step 1: take the compile away.
    fn unwrap_call(&self, node: Node<'_>, form: CallForm, edits: &mut Edits) {
        let src = self.src;
        match form {
            CallForm::Decorator | CallForm::BareDecorator => {
                if let Some(dec) = node.parent() {
                    edits.delete_lines(src, dec.start_byte(), dec.end_byte());
                }
            }
            CallForm::ModuleMethod => self.drop_statement(node, edits),
            CallForm::Call => {
                let args = match node.child_by_field_name("arguments") {
                    Some(a) => a,
                    None => return,
                };
                let model = positional(args, 0).or_else(|| keyword(args, "model", src));
                if let Some(m) = model {
                    edits.replace(
                        node.start_byte(),
                        node.end_byte(),
                        wrap_if_needed(node, m, src),
                    );
                    return;
                }
                // `torch.compile(backend=...)(fn)`: the outer call becomes `fn`.
                if let Some(outer) = node.parent().filter(|p| {
                    p.kind() == "call"
                        && p.child_by_field_name("function")
                            .is_some_and(|f| f.id() == node.id())
                }) {
                    if let Some(fn_arg) = outer
                        .child_by_field_name("arguments")
                        .and_then(|a| positional(a, 0))
                    {
                        edits.replace(
                            outer.start_byte(),
                            outer.end_byte(),
                            wrap_if_needed(outer, fn_arg, src),
                        );
                        return;
                    }
                }
                // A compile "decorator factory" kept for later: the identity function.
                edits.replace(node.start_byte(), node.end_byte(), "(lambda fn: fn)".into());
            }
        }
    }

    /// Removes a `model.compile(...)` statement (it compiles in place and returns None).
    fn drop_statement(&self, call: Node<'_>, edits: &mut Edits) {
        let src = self.src;
        let Some(stmt) = call.parent().filter(|p| p.kind() == "expression_statement") else {
            edits.replace(call.start_byte(), call.end_byte(), "None".into());
            return;
        };
        let siblings = stmt.parent().map_or(0, |block| {
            let mut cursor = block.walk();
            block
                .named_children(&mut cursor)
                .filter(|c| c.kind() != "comment")
                .count()
        });
        if siblings > 1 && stands_on_own_lines(src, stmt.start_byte(), stmt.end_byte()) {
            edits.delete_lines(src, stmt.start_byte(), stmt.end_byte());
        } else if siblings > 1 {
            edits.replace(call.start_byte(), call.end_byte(), "None".into());
        } else {
            edits.replace(stmt.start_byte(), stmt.end_byte(), "pass".into());
        }
    }

    /// Steps 2 and 3.
    fn swap_backend(
        &self,
        node: Node<'_>,
        form: CallForm,
        name: &str,
        edits: &mut Edits,
    ) -> OptionsChange {
        let src = self.src;
        let Some(args) = self.call_args(node, form) else {
            edits.insert(node.end_byte(), format!("(backend=\"{name}\")"));
            return OptionsChange::Absent;
        };
        let options = keyword_argument(args, "options", src);
        let change = match options {
            Some(kw) => {
                let v = kw.child_by_field_name("value").unwrap_or(kw);
                OptionsChange::Dropped {
                    keys: dict_keys(v, src),
                    text: text(v, src).to_string(),
                }
            }
            None => OptionsChange::Absent,
        };
        match backend_arg(args, form, src) {
            Some(v) => {
                let quote = quote_of(v, src);
                edits.replace(
                    v.start_byte(),
                    v.end_byte(),
                    format!("{quote}{name}{quote}"),
                );
                if let Some(kw) = options {
                    remove_argument(args, kw, src, edits);
                }
            }
            None => {
                let new_arg = format!("backend=\"{name}\"");
                match options {
                    // Dropping options and adding backend: one argument takes the other's place.
                    Some(kw) => edits.replace(kw.start_byte(), kw.end_byte(), new_arg),
                    None => append_element(args, &new_arg, src, edits),
                }
            }
        }
        change
    }

    /// Where the prelude goes: the start of the line of the first top-level statement that is
    /// neither the module docstring nor a `from __future__` import (the end of the file when
    /// there is none).
    fn prelude_offset(&self) -> usize {
        let root = self.tree.root_node();
        let mut cursor = root.walk();
        let mut first = true;
        for c in root.named_children(&mut cursor) {
            let docstring = first
                && c.kind() == "expression_statement"
                && c.named_child(0).is_some_and(|s| s.kind() == "string");
            let skip = c.kind() == "comment" || c.kind() == "future_import_statement" || docstring;
            if c.kind() != "comment" {
                first = false;
            }
            if !skip {
                return line_start(self.src, c.start_byte());
            }
        }
        self.src.len()
    }

    /// Steps 4 and 5 with extra options: `pairs` (key, Python expression) merged into `options`.
    /// A literal dict gets each key added at the end or its existing value replaced; any other
    /// expression becomes `{**expr, pairs…}`; without options, `options={pairs…}` is added.
    fn merge_options(
        &self,
        node: Node<'_>,
        form: CallForm,
        pairs: &[(String, String)],
        edits: &mut Edits,
    ) -> OptionsChange {
        let src = self.src;
        let literal = |quote: char| {
            pairs
                .iter()
                .map(|(k, v)| format!("{quote}{k}{quote}: {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(args) = self.call_args(node, form) else {
            edits.insert(node.end_byte(), format!("(options={{{}}})", literal('"')));
            return OptionsChange::Merged {
                into: MergeTarget::NewArgument,
            };
        };
        let Some(value) = keyword(args, "options", src) else {
            append_element(args, &format!("options={{{}}}", literal('"')), src, edits);
            return OptionsChange::Merged {
                into: MergeTarget::NewArgument,
            };
        };
        if value.kind() != "dictionary" {
            edits.replace(
                value.start_byte(),
                value.end_byte(),
                format!("{{**{}, {}}}", text(value, src), literal('"')),
            );
            return OptionsChange::Merged {
                into: MergeTarget::SpreadExpression,
            };
        }
        // A literal dict: set each existing key, add the others at the end.
        let key_quote = first_key_quote(value, src);
        let mut replaced_all = true;
        let mut added = Vec::new();
        for (k, v) in pairs {
            let mut cursor = value.walk();
            let existing = value.named_children(&mut cursor).find(|c| {
                c.kind() == "pair"
                    && c.child_by_field_name("key")
                        .and_then(|key| string_literal(key, src))
                        .is_some_and(|key| &key == k)
            });
            match existing.and_then(|p| p.child_by_field_name("value")) {
                Some(old) => edits.replace(old.start_byte(), old.end_byte(), v.clone()),
                None => {
                    replaced_all = false;
                    added.push(format!("{key_quote}{k}{key_quote}: {v}"));
                }
            }
        }
        if !added.is_empty() {
            append_element(value, &added.join(", "), src, edits);
        }
        OptionsChange::Merged {
            into: if replaced_all {
                MergeTarget::ReplacedValue
            } else {
                MergeTarget::LiteralDict
            },
        }
    }
}

#[cfg(test)]
mod tests;
