#!/usr/bin/env bash
# Builds the npgx wheel for x86_64 manylinux_2_28 (glibc 2.28, the tag of torch_npu's wheels) with
# maturin and zig, checks the tag with auditwheel, installs the wheel into a fresh venv and runs
# `npgx --version`, one scan of testdata/dump-example, a Parquet shard of it and `npgx merge` of
# that shard from there (docs/cluster.md).
#
#   scripts/check_wheel.sh            (honours CARGO_TARGET_DIR; the wheel goes to $target/wheels)
#   MANYLINUX=manylinux_2_31 scripts/check_wheel.sh     (another glibc floor)
#   LEAN=1 scripts/check_wheel.sh     (the lean build, --no-default-features: no polars, so no
#                                      shard and no merge; `npgx merge` must refuse with exit 2)
#
# maturin (>= 1.5) drives the build with its built-in cargo-zigbuild: zig (the `ziglang` package
# from PyPI) links against the glibc 2.28 symbol versions whatever the build machine's glibc, so
# no manylinux container is needed. A release build of polars takes ~10-45 min on 2 cores: this is
# not part of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
py="${PYTHON:-python3}"
policy="${MANYLINUX:-manylinux_2_28}"
features=()
[ -n "${LEAN:-}" ] && features=(--no-default-features)
triple=x86_64-unknown-linux-gnu
work="$target/wheel-check"
rm -rf "$work" && mkdir -p "$work"
fail() { echo "check_wheel: $*" >&2; exit 1; }

echo "== maturin, ziglang, auditwheel (build venv $work/build)"
"$py" -m venv "$work/build"
"$work/build/bin/pip" install --quiet --disable-pip-version-check \
  "maturin>=1.5,<2" ziglang auditwheel
"$work/build/bin/maturin" --version

echo "== maturin build --release --zig --compatibility $policy --target $triple ${features[*]}"
rm -f "$target"/wheels/npgx-*.whl
# PATH: maturin finds zig through the ziglang package of the venv's python.
PATH="$work/build/bin:$PATH" CARGO_TARGET_DIR="$target" \
  "$work/build/bin/maturin" build --release --locked --zig --compatibility "$policy" \
  --target "$triple" "${features[@]}" --out "$target/wheels"
wheel=$(ls "$target"/wheels/npgx-*.whl | head -n 1)
echo "== wheel: $wheel ($(du -h "$wheel" | cut -f1))"
case "$(basename "$wheel")" in
  *-"${policy}_x86_64".whl) ;;
  *) fail "the wheel's name does not carry ${policy}_x86_64: $(basename "$wheel")" ;;
esac

echo "== auditwheel show"
"$work/build/bin/auditwheel" show "$wheel" | tee "$work/auditwheel.txt"
# auditwheel names the most compatible tag the wheel's symbols allow: the claimed policy passes
# when that tag is the same glibc or older (a 2_17 answer fits a 2_28 wheel; a 2_34 one does not).
"$work/build/bin/python" - "$work/auditwheel.txt" "$policy" <<'PY'
import re, sys
text = " ".join(open(sys.argv[1]).read().split())
claimed = sys.argv[2]
legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
m = re.search(r'consistent with the following platform tag: "([a-z0-9_]+)_x86_64"', text)
if not m:
    sys.exit(f"auditwheel did not find the wheel manylinux-consistent: {text[:400]}")
def glibc(tag):
    if tag in legacy:
        return legacy[tag]
    v = re.fullmatch(r"manylinux_(\d+)_(\d+)", tag)
    if not v:
        sys.exit(f"auditwheel answered {tag!r}, not a manylinux tag")
    return int(v[1]), int(v[2])
found, want = glibc(m[1]), glibc(claimed)
if found > want:
    sys.exit(f"the wheel needs glibc {found[0]}.{found[1]} ({m[1]}), more than {claimed} allows")
print(f"auditwheel: consistent with {m[1]} (glibc {found[0]}.{found[1]}) -> the {claimed} tag holds")
PY

echo "== fresh venv $work/venv"
"$py" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
npgx="$work/venv/bin/npgx"
[ -x "$npgx" ] || fail "the wheel did not install bin/npgx"
version=$("$npgx" --version)
echo "$version"
case "$version" in
  *"features: tables"*) [ -z "${LEAN:-}" ] || fail "a lean wheel with the tables feature" ;;
  *) [ -n "${LEAN:-}" ] || fail "the wheel's npgx lacks the tables feature" ;;
esac

echo "== npgx dump-scan testdata/dump-example (from the venv)"
# The example holds anomalies: exit 1 is the expected answer of the scan and of the merge.
expect1() { set +e; "$@"; code=$?; set -e; [ "$code" = 1 ] || fail "$* exited $code, expected 1"; }
expect1 "$npgx" dump-scan testdata/dump-example --format json --no-progress -o "$work/scan.json"
if [ -n "${LEAN:-}" ]; then
  set +e; "$npgx" merge "$work/shard.parquet" 2> "$work/merge.err"; code=$?; set -e
  [ "$code" = 2 ] && grep -q 'needs the `tables` feature' "$work/merge.err" \
    || fail "the lean npgx merge exited $code: $(cat "$work/merge.err")"
  echo "lean: npgx merge refused (exit 2): $(cat "$work/merge.err")"
  echo '{"summary": "not built (lean)"}' > "$work/merge.json"
else
  expect1 "$npgx" dump-scan testdata/dump-example --format parquet --no-progress -o "$work/shard.parquet"
  expect1 "$npgx" merge "$work/shard.parquet" --format json -o "$work/merge.json"
fi
"$work/venv/bin/python" - "$work/scan.json" "$work/merge.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "npgx.dump-scan", d["schema"]
s = d["summary"]
assert s["tensors"] > 0 and s["anomalous_tensors"] > 0, s
m = json.load(open(sys.argv[2]))
print(f"scan from the wheel: {s['tensors']} tensors, {s['anomalous_tensors']} anomalous; "
      f"merge of its shard: {m['summary']} — OK")
PY
echo "wheel OK: $wheel"
