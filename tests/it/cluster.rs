//! Cluster runs under launchers (docs/cluster.md): symbolic links as roots.
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

/// A fresh directory under `target/test-cluster/`.
fn scratch(name: &str) -> PathBuf {
    let d = common::repo().join("target/test-cluster").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// `npgx ARGS --format json`: the exit code and the document without the keys naming the roots,
/// with the file paths under `link` written under `real`.
fn json_without(args: &[&str], roots: &[&str], link: &Path, real: &Path) -> (Option<i32>, Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = common::npgx(&all);
    let text = String::from_utf8_lossy(&out.stdout).replace(s(link), s(real));
    let mut v: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    for k in roots {
        v.as_object_mut().expect("object").remove(*k);
    }
    (out.status.code(), v)
}

#[test]
fn a_root_given_as_a_symbolic_link_is_walked_as_its_target() {
    let real = common::repo().join("testdata/dump-example/worldsize1_global_rank0");
    let d = scratch("symlink-root");
    // `/home/dump -> /data/dump`: the link's own name carries no rank level; the target's does.
    let link = d.join("home-dump");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let (code, direct) = json_without(
        &["dump-scan", s(&real), "--no-progress"],
        &["root"],
        &link,
        &real,
    );
    assert_eq!(code, Some(1), "the example has anomalies");
    assert_eq!(direct["summary"]["tensors"], 14);
    assert_eq!(direct["groups"][0]["rank"], 0);
    let (code, linked) = json_without(
        &["dump-scan", s(&link), "--no-progress"],
        &["root"],
        &link,
        &real,
    );
    assert_eq!(code, Some(1));
    assert_eq!(linked, direct);
    // dump-compare: the link on one side, the real path on the other, pairs every tensor.
    let keys = ["golden", "target"];
    let (code, both_real) =
        json_without(&["dump-compare", s(&real), s(&real)], &keys, &link, &real);
    assert_eq!(code, Some(0));
    assert_eq!(both_real["summary"]["pairs"], 14);
    let (code, one_link) = json_without(&["dump-compare", s(&link), s(&real)], &keys, &link, &real);
    assert_eq!(code, Some(0));
    assert_eq!(one_link, both_real);
    let (code, two_links) =
        json_without(&["dump-compare", s(&link), s(&link)], &keys, &link, &real);
    assert_eq!(code, Some(0));
    assert_eq!(two_links, both_real);
    let _ = std::fs::remove_dir_all(&d);
}
