//! The syntax the rewrites work with: tree-sitter node queries (arguments, keywords, string
//! literals, dict keys), the names `torch` and `torch.compile` go by, line arithmetic, and the
//! byte-range [`Edits`] a rewrite is made of.

use tree_sitter::Node;

use super::{CallForm, OptionsChange, COMPILE_KWARGS};

/// Names under which `torch` and `torch.compile` are bound in the file.
pub(super) struct Aliases {
    pub(super) torch: Vec<String>,
    pub(super) compile: Vec<String>,
}

impl Aliases {
    pub(super) fn collect(root: Node<'_>, src: &str) -> Self {
        let mut torch = vec!["torch".to_string()];
        let mut compile = Vec::new();
        walk(root, &mut |node| match node.kind() {
            "import_statement" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    if name.kind() == "aliased_import" {
                        let module = name.child_by_field_name("name").map(|n| text(n, src));
                        if module == Some("torch") {
                            if let Some(a) = name.child_by_field_name("alias") {
                                torch.push(text(a, src).to_string());
                            }
                        }
                    }
                }
            }
            "import_from_statement" => {
                let module = node
                    .child_by_field_name("module_name")
                    .map(|n| text(n, src));
                if module != Some("torch") {
                    return;
                }
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    match name.kind() {
                        "dotted_name" if text(name, src) == "compile" => {
                            compile.push("compile".to_string())
                        }
                        "aliased_import" => {
                            let original = name.child_by_field_name("name").map(|n| text(n, src));
                            if original == Some("compile") {
                                if let Some(a) = name.child_by_field_name("alias") {
                                    compile.push(text(a, src).to_string());
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        });
        Aliases { torch, compile }
    }

    /// `torch.compile` / `t.compile` / `compile` (when imported from torch).
    pub(super) fn is_torch_compile(&self, func: Node<'_>, src: &str) -> bool {
        match func.kind() {
            "attribute" => {
                let obj = func.child_by_field_name("object");
                let attr = func.child_by_field_name("attribute");
                match (obj, attr) {
                    (Some(o), Some(a)) => {
                        o.kind() == "identifier"
                            && self.torch.iter().any(|t| t == text(o, src))
                            && text(a, src) == "compile"
                    }
                    _ => false,
                }
            }
            "identifier" => self.compile.iter().any(|c| c == text(func, src)),
            _ => false,
        }
    }
}

pub(super) fn is_module_compile_args(args: Node<'_>, src: &str) -> bool {
    arguments(args).into_iter().all(|c| {
        c.kind() == "keyword_argument"
            && c.child_by_field_name("name")
                .is_some_and(|n| COMPILE_KWARGS.contains(&text(n, src)))
    })
}

pub(super) fn walk<'t>(node: Node<'t>, visit: &mut dyn FnMut(Node<'t>)) {
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        visit(n);
        let children: Vec<Node<'t>> = n.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
}

pub(super) fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    let mut found = None;
    walk(node, &mut |n| {
        if found.is_none() && (n.is_error() || n.is_missing()) {
            found = Some(n);
        }
    });
    found
}

pub(super) fn climb_to_range(mut node: Node<'_>, start: usize, end: usize) -> Option<Node<'_>> {
    loop {
        if node.start_byte() == start
            && node.end_byte() == end
            && matches!(node.kind(), "call" | "attribute" | "identifier")
        {
            return Some(node);
        }
        node = node.parent()?;
    }
}

pub(super) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

pub(super) fn enclosing_function(node: Node<'_>, src: &str) -> Option<String> {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if n.kind() == "function_definition" {
            return n
                .child_by_field_name("name")
                .map(|name| text(name, src).to_string());
        }
        cur = n.parent();
    }
    None
}

/// Argument nodes of an argument list (comments and punctuation left out).
pub(super) fn arguments(args: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = args.walk();
    args.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

pub(super) fn positional(args: Node<'_>, index: usize) -> Option<Node<'_>> {
    arguments(args)
        .into_iter()
        .filter(|a| {
            !matches!(
                a.kind(),
                "keyword_argument" | "list_splat" | "dictionary_splat"
            )
        })
        .nth(index)
}

pub(super) fn keyword_argument<'t>(args: Node<'t>, name: &str, src: &str) -> Option<Node<'t>> {
    arguments(args).into_iter().find(|a| {
        a.kind() == "keyword_argument"
            && a.child_by_field_name("name")
                .is_some_and(|n| text(n, src) == name)
    })
}

pub(super) fn keyword<'t>(args: Node<'t>, name: &str, src: &str) -> Option<Node<'t>> {
    keyword_argument(args, name, src).and_then(|kw| kw.child_by_field_name("value"))
}

/// The backend value: keyword `backend=`, or positionally the argument after the model.
pub(super) fn backend_arg<'t>(args: Node<'t>, form: CallForm, src: &str) -> Option<Node<'t>> {
    keyword(args, "backend", src).or_else(|| match form {
        CallForm::Call | CallForm::Decorator => positional(args, 1),
        _ => None,
    })
}

/// The content of a plain (non-f) string literal.
pub(super) fn string_literal(node: Node<'_>, src: &str) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let raw = text(node, src);
    let body = raw.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    if body.len() != raw.len() && raw[..raw.len() - body.len()].contains(['f', 'F']) {
        return None;
    }
    for q in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(inner) = body.strip_prefix(q).and_then(|b| b.strip_suffix(q)) {
            return Some(inner.to_string());
        }
    }
    None
}

pub(super) fn quote_of(node: Node<'_>, src: &str) -> char {
    if node.kind() == "string" && text(node, src).ends_with('\'') {
        '\''
    } else {
        '"'
    }
}

pub(super) fn first_key_quote(dict: Node<'_>, src: &str) -> char {
    let mut cursor = dict.walk();
    let first_key = dict
        .named_children(&mut cursor)
        .find(|c| c.kind() == "pair")
        .and_then(|p| p.child_by_field_name("key"));
    first_key.map_or('"', |k| quote_of(k, src))
}

pub(super) fn dict_keys(value: Node<'_>, src: &str) -> Vec<String> {
    if value.kind() != "dictionary" {
        return Vec::new();
    }
    let mut cursor = value.walk();
    value
        .named_children(&mut cursor)
        .filter_map(|c| match c.kind() {
            "pair" => c
                .child_by_field_name("key")
                .map(|k| string_literal(k, src).unwrap_or_else(|| text(k, src).to_string())),
            "dictionary_splat" => Some(text(c, src).to_string()),
            _ => None,
        })
        .collect()
}

pub(super) fn options_state(args: Option<Node<'_>>, src: &str) -> OptionsChange {
    match args.and_then(|a| keyword(a, "options", src)) {
        Some(_) => OptionsChange::Kept,
        None => OptionsChange::Absent,
    }
}

/// The replacement text for step 1, parenthesised when the model expression would bind
/// differently in the call's place (`torch.compile(lambda x: x)(y)`).
pub(super) fn wrap_if_needed(replaced: Node<'_>, inner: Node<'_>, src: &str) -> String {
    let t = text(inner, src);
    let atomic = matches!(
        inner.kind(),
        "identifier"
            | "attribute"
            | "call"
            | "subscript"
            | "parenthesized_expression"
            | "string"
            | "list"
            | "dictionary"
            | "tuple"
    );
    let standalone = replaced.parent().is_some_and(|p| {
        matches!(
            p.kind(),
            "assignment"
                | "keyword_argument"
                | "argument_list"
                | "return_statement"
                | "expression_statement"
        )
    });
    if atomic || standalone {
        t.to_string()
    } else {
        format!("({t})")
    }
}

pub(super) fn line_start(src: &str, at: usize) -> usize {
    src.get(..at)
        .and_then(|s| s.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// End of the line containing `at`, just before its `\n` (or the end of the source).
pub(super) fn line_end(src: &str, at: usize) -> usize {
    src.get(at..)
        .and_then(|s| s.find('\n'))
        .map_or(src.len(), |i| at + i)
}

/// Whether `[start, end)` has only whitespace before it on its first line and only
/// whitespace, an optional comma and an optional comment after it on its last line.
pub(super) fn stands_on_own_lines(src: &str, start: usize, end: usize) -> bool {
    let before = src.get(line_start(src, start)..start).unwrap_or("x");
    let after = src.get(end..line_end(src, end)).unwrap_or("x");
    let after = after.trim_start();
    let after = after.strip_prefix(',').unwrap_or(after).trim_start();
    before.trim().is_empty() && (after.is_empty() || after.starts_with('#'))
}

/// Removes argument `arg` (a child of `args`) with its separating comma, keeping comments that
/// belong to other arguments.
pub(super) fn remove_argument(args: Node<'_>, arg: Node<'_>, src: &str, edits: &mut Edits) {
    if stands_on_own_lines(src, arg.start_byte(), arg.end_byte()) {
        edits.delete_lines(src, arg.start_byte(), arg.end_byte());
        return;
    }
    let mut cursor = args.walk();
    let children: Vec<Node<'_>> = args.children(&mut cursor).collect();
    let Some(pos) = children.iter().position(|c| c.id() == arg.id()) else {
        return;
    };
    // A comma right after the argument: delete "arg, " up to the next token.
    if let Some(comma) = children.get(pos + 1).filter(|c| c.kind() == ",") {
        let next = children
            .get(pos + 2)
            .map_or(comma.end_byte(), |n| n.start_byte());
        let gap = src.get(comma.end_byte()..next).unwrap_or("");
        let end = if gap.contains('\n') || gap.contains('#') {
            comma.end_byte()
        } else {
            next
        };
        // `f(a, options=x, )`: keep the space that separated us from the previous argument.
        edits.delete(arg.start_byte(), end);
        return;
    }
    // The last argument: delete from the end of the previous argument, unless a comment sits
    // in between (then only the argument goes and its comma stays as a trailing comma).
    let prev_arg = children[..pos]
        .iter()
        .rev()
        .find(|c| c.is_named() && c.kind() != "comment");
    let comment_between = children[..pos]
        .iter()
        .rev()
        .take_while(|c| prev_arg.is_none_or(|p| c.id() != p.id()))
        .any(|c| c.kind() == "comment");
    match prev_arg {
        Some(p) if !comment_between => edits.delete(p.end_byte(), arg.end_byte()),
        _ => edits.delete(arg.start_byte(), arg.end_byte()),
    }
}

/// Appends `element` to a bracketed list (`argument_list` or `dictionary`) in the list's style:
/// inline lists get `, element`; lists whose closing bracket sits on its own line get a new
/// line with the last element's indentation, keeping a trailing comma if there was one.
pub(super) fn append_element(list: Node<'_>, element: &str, src: &str, edits: &mut Edits) {
    let mut cursor = list.walk();
    let children: Vec<Node<'_>> = list.children(&mut cursor).collect();
    let Some(close) = children.last().copied() else {
        return;
    };
    let elements: Vec<&Node<'_>> = children
        .iter()
        .filter(|c| c.is_named() && c.kind() != "comment")
        .collect();
    let Some(last) = elements.last() else {
        // Empty list: `()` / `{}` → `(element)`.
        edits.insert(close.start_byte(), element.to_string());
        return;
    };
    let last_pos = children
        .iter()
        .position(|c| c.id() == last.id())
        .unwrap_or(0);
    let trailing_comma = children
        .get(last_pos + 1)
        .filter(|c| c.kind() == ",")
        .copied();
    let tail_end = trailing_comma.map_or(last.end_byte(), |c| c.end_byte());
    let multiline = close.start_position().row > src_row(src, tail_end);
    if !multiline {
        match trailing_comma {
            Some(c) => edits.insert(c.end_byte(), format!(" {element}")),
            None => edits.insert(last.end_byte(), format!(", {element}")),
        }
        return;
    }
    let line = line_start(src, last.start_byte());
    let indent: String = src
        .get(line..last.start_byte())
        .unwrap_or("")
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    if trailing_comma.is_none() {
        edits.insert(last.end_byte(), ",".into());
    }
    let comma = if trailing_comma.is_some() { "," } else { "" };
    edits.insert(
        line_end(src, tail_end),
        format!("\n{indent}{element}{comma}"),
    );
}

pub(super) fn src_row(src: &str, at: usize) -> usize {
    src.get(..at).map_or(0, |s| s.matches('\n').count())
}

/// Non-overlapping byte-range replacements, applied in one pass.
#[derive(Default)]
pub(super) struct Edits {
    items: Vec<(usize, usize, String)>,
}

impl Edits {
    pub(super) fn replace(&mut self, start: usize, end: usize, with: String) {
        self.items.push((start, end, with));
    }
    pub(super) fn insert(&mut self, at: usize, with: String) {
        self.items.push((at, at, with));
    }
    pub(super) fn delete(&mut self, start: usize, end: usize) {
        self.items.push((start, end, String::new()));
    }
    /// Deletes the whole lines spanned by `[start, end)`, including the final newline.
    pub(super) fn delete_lines(&mut self, src: &str, start: usize, end: usize) {
        let from = line_start(src, start);
        let to = line_end(src, end);
        let to = if src[to..].starts_with('\n') {
            to + 1
        } else {
            to
        };
        self.delete(from, to);
    }
    pub(super) fn apply(mut self, src: &str) -> String {
        // Inserts at the same offset keep their order of registration.
        self.items.sort_by_key(|(s, e, _)| (*s, *e));
        let mut out = String::with_capacity(src.len() + 64);
        let mut pos = 0;
        for (start, end, with) in self.items {
            if start < pos {
                continue; // overlapping edit: never produced by the rewrites above
            }
            out.push_str(src.get(pos..start).unwrap_or(""));
            out.push_str(&with);
            pos = end;
        }
        out.push_str(src.get(pos..).unwrap_or(""));
        out
    }
}
