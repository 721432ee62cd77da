//! The agent skills under `skills/` cannot rot: `scripts/check_skills.py` checks their form
//! (frontmatter, size, links, evals.json) and runs every fenced shell command of every SKILL.md
//! and reference with this binary on the fixtures of its table, checking the exit codes the
//! skill names and the JSON fields it tells the agent to read (docs/agents.md, "Skills that cannot rot").
//! The checker needs the test Python (PyYAML, markdown-it-py, jsonschema, and torch for the
//! triage steps), so these tests are ignored by a bare `cargo test` and run by scripts/test.sh.

use std::process::Command;

use crate::common::repo;
use crate::triage::torch_python;

/// Runs `scripts/check_skills.py` with `args` and this build of npgx; returns (exit code, stdout).
fn check_skills(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(torch_python())
        .arg(repo().join("scripts/check_skills.py"))
        .args(["--npgx", env!("CARGO_BIN_EXE_npgx")])
        .args(args)
        .output()
        .expect("scripts/check_skills.py runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
#[ignore = "needs the test Python (PyYAML, markdown-it-py, jsonschema, torch); scripts/test.sh provides it and runs this"]
fn every_skill_is_well_formed_and_every_command_in_it_runs_as_it_says() {
    let (code, text) = check_skills(&[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("skills: 6 checked"), "{text}");
    assert!(text.contains(", 0 problems"), "{text}");
}

#[test]
#[ignore = "needs the test Python (PyYAML, markdown-it-py, jsonschema, torch); scripts/test.sh provides it and runs this"]
fn the_checker_reports_every_kind_of_rot() {
    let (code, text) = check_skills(&["--self-test"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("kinds of rot was reported"), "{text}");
}

/// Every source tag the knowledge and remedy tables define (`[TAG]` in their headers) and every
/// hyphenated tag their rows cite is explained in the skills' sources reference, so an agent
/// can tell a user what `source: PTA-EC` is.
#[test]
fn every_source_tag_is_explained_for_the_agent() {
    let legend = std::fs::read_to_string(
        repo().join("skills/npgx-npugraph-ex-triage/references/sources.md"),
    )
    .expect("the sources reference");
    let tables = ["knowledge.tsv", "remedy.tsv"].map(|t| {
        std::fs::read_to_string(repo().join("parsers/src/knowledge").join(t)).expect("a table")
    });
    let tag_at = |s: &str| -> Option<String> {
        let end = s
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(s.len());
        let tag = &s[..end];
        (tag.len() >= 2 && tag.starts_with(|c: char| c.is_ascii_uppercase())).then(|| tag.into())
    };
    let mut tags = std::collections::BTreeSet::new();
    for table in &tables {
        for line in table.lines() {
            if line.starts_with('#') {
                // `[TAG]` definitions in the header (`[N]` in the remedy table's text is a column
                // placeholder, not a tag).
                for part in line.split('[').skip(1) {
                    if let Some((t, _)) = part.split_once(']') {
                        if t.len() >= 2 && tag_at(t).as_deref() == Some(t) {
                            tags.insert(t.to_string());
                        }
                    }
                }
            } else if let Some(source) = line.rsplit('\t').next() {
                // Every hyphenated capital tag anywhere in the source (`PTA-EC (…)`, `see RT-DOC`).
                let mut rest = source;
                while let Some(at) = rest.find(|c: char| c.is_ascii_uppercase()) {
                    let word_start =
                        at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric());
                    let tail = &rest[at..];
                    let t = tag_at(tail);
                    let len = t.as_ref().map_or(1, String::len);
                    if let Some(t) = t.filter(|t| word_start && t.contains('-')) {
                        tags.insert(t.trim_end_matches('-').to_string());
                    }
                    rest = &tail[len..];
                }
            }
        }
    }
    assert!(tags.len() > 20, "{tags:?}");
    let missing: Vec<&String> = tags
        .iter()
        .filter(|t| !legend.contains(&format!("| `{t}` |")))
        .collect();
    assert!(missing.is_empty(), "not in sources.md: {missing:?}");
}
