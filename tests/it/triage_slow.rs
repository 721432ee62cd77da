//! The option bisect's slower end-to-end cases, run by scripts/test_slow.sh (not in CI): the
//! search they drive — pairs of the flips that changed the failure, "not isolated" when nothing
//! helps — is tested in CI by the unit tests of `src/triage/bisect` with a fake runner, and end
//! to end there by tests/it/triage.rs (a single flip isolating a crash, the accuracy bisect).
//! These run the same searches with real PyTorch on CPU and the labelled npugraph_ex test
//! double, about 15 Python processes; and a script nondeterministic in eager, which is not
//! bisected (6 more; its rule and the bisect's decision are unit tests in CI).

use crate::triage::{double_options, verdicts};

#[test]
#[ignore = "needs PyTorch (CPU); scripts/test_slow.sh installs it and runs this"]
fn bisect_reports_not_isolated_when_no_flip_helps() {
    let (code, v, _) = double_options(
        "bisect",
        "bisect-none",
        "double_model.py",
        &[
            ("NPGX_TEST_DOUBLE", "fail_without_force_eager"),
            ("NPGX_TEST_DOUBLE_REJECT", "force_recapture,clone_input,reuse_graph_pool_in_same_fx,remove_cat_ops,input_inplace_pass,pattern_fusion_pass,capture_error_mode"),
        ],
        &[],
    );
    assert_eq!(code, 1, "{v:#}");
    let b = &v["bisect"];
    assert_eq!(b["outcome"], "not_isolated", "{b:#}");
    let got = verdicts(&v);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.iter().all(|(_, v)| v == "stays"), "{got:?}");
    assert!(
        b["conclusion"]
            .as_str()
            .unwrap()
            .starts_with("not isolated by options: no single flip (3 run) and no pair"),
        "{b:#}"
    );
    assert_eq!(b["skipped"].as_array().unwrap().len(), 7);
}

#[test]
#[ignore = "needs PyTorch (CPU); scripts/test_slow.sh installs it and runs this"]
fn bisect_tries_pairs_of_the_flips_that_changed_the_failure() {
    let (code, v, root) = double_options(
        "bisect",
        "bisect-pair",
        "double_model.py",
        &[
            ("NPGX_TEST_DOUBLE_FAIL_WHEN", "remove_cat_ops=True,pattern_fusion_pass=True"),
            ("NPGX_TEST_DOUBLE_REJECT", "force_recapture,clone_input,reuse_graph_pool_in_same_fx,remove_noop_ops,input_inplace_pass,capture_error_mode"),
        ],
        &[],
    );
    assert_eq!(code, 1, "{v:#}");
    let b = &v["bisect"];
    assert_eq!(
        verdicts(&v),
        [
            ("clone_output-True".to_string(), "stays".to_string()),
            ("remove_cat_ops-False".into(), "changes".into()),
            ("inplace_pass-True".into(), "stays".into()),
            ("pattern_fusion_pass-False".into(), "changes".into()),
            (
                "remove_cat_ops-False+pattern_fusion_pass-False".into(),
                "disappears".into()
            ),
        ]
    );
    assert_eq!(b["outcome"], "isolated");
    assert_eq!(
        b["implicated"],
        serde_json::json!(["remove_cat_ops=False + pattern_fusion_pass=False"])
    );
    let changed = &b["variants"][1];
    assert_eq!(
        changed["first_causal_error"],
        "RuntimeError: aclgraph capture failed (test double): pattern_fusion_pass=True"
    );
    assert!(b["conclusion"].as_str().unwrap().starts_with("passes only with remove_cat_ops=False and pattern_fusion_pass=False together → the cat elimination pass is implicated and the ATen pattern fusions are implicated"), "{b:#}");
    assert!(root
        .join("bisect/remove_cat_ops-False+pattern_fusion_pass-False/SUCCESS")
        .exists());
}

#[test]
#[ignore = "needs PyTorch (CPU); scripts/test_slow.sh installs it and runs this"]
fn a_script_nondeterministic_in_eager_is_reported_and_not_bisected() {
    // A script that reseeds itself from the OS: reported as nondeterministic, not accuracy, and
    // not bisected — in CI by the unit tests of the rule and of the bisect's decision
    // (src/triage/analyze.rs, src/triage/bisect); every step starting from the same seed is
    // tests/it/triage.rs's accuracy bisect, on a model with no seed of its own.
    let (code, v, _) = double_options(
        "bisect",
        "seed-nondeterministic",
        "nondeterministic_model.py",
        &[],
        &["--compare-outputs"],
    );
    assert_eq!(code, 0, "{v:#}");
    let a = &v["analysis"];
    assert_eq!(a["route"], "undetermined", "{a:#}");
    assert_eq!(a["rule"], "compare.eager-nondeterministic");
    assert!(
        a["notes"]
            .to_string()
            .contains("nondeterministic even in eager"),
        "{a:#}"
    );
    assert_eq!(v["bisect"]["outcome"], "not_applicable");
    assert!(v["bisect"]["variants"].as_array().unwrap().is_empty());
}
