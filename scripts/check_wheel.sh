#!/usr/bin/env bash
# Builds the npgx wheel for manylinux_2_28 (glibc 2.28, the tag of torch_npu's wheels), x86_64
# or aarch64 (Kunpeng, the CPUs of Atlas servers), with maturin and zig, checks the tag with
# auditwheel, installs the wheel and runs `npgx --version`, one scan of testdata/dump-example, a
# Parquet shard of it and `npgx merge` of that shard from there (docs/cluster.md), then `import
# npgx` in the same fresh venv: its scan document and table equal the command's (docs/python.md).
# The wheel holds both: bin/npgx and the Python module (PyO3, abi3, CPython >= 3.9). The aarch64
# wheel is installed with pip's --platform into a directory; its binary runs under qemu-user, and
# its module is imported there by an aarch64 CPython (Debian's, unpacked) under qemu-user too.
#
#   scripts/check_wheel.sh            (honours CARGO_TARGET_DIR; the wheel goes to $target/wheels)
#   scripts/check_wheel.sh --target aarch64     (cross: Debian's rustc-web and its arm64
#                                      standard library, qemu-user; scripts/aarch64_env.sh
#                                      installs them with apt-get when missing)
#   MANYLINUX=manylinux_2_31 scripts/check_wheel.sh     (another glibc floor)
#   LEAN=1 scripts/check_wheel.sh     (the lean build, --no-default-features: no polars, so no
#                                      shard and no merge; `npgx merge` must refuse with exit 2)
#
# maturin (>= 1.5) drives the build with its built-in cargo-zigbuild: zig (the `ziglang` package
# from PyPI) links against the glibc 2.28 symbol versions whatever the build machine's glibc, so
# no manylinux container is needed. A release build of polars takes ~10-45 min on 2 cores (far
# longer cross-built for aarch64: docs/performance.md): this is not part of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
py="${PYTHON:-python3}"
policy="${MANYLINUX:-manylinux_2_28}"
features=()
[ -n "${LEAN:-}" ] && features=(--no-default-features)
arch=x86_64
while [ $# -gt 0 ]; do
  case "$1" in
    --target) arch="${2:-}"; shift 2 || { echo "check_wheel: --target needs x86_64 or aarch64" >&2; exit 2; } ;;
    --target=*) arch="${1#--target=}"; shift ;;
    *) echo "check_wheel: unknown argument $1 (usage: check_wheel.sh [--target x86_64|aarch64])" >&2; exit 2 ;;
  esac
done
fail() { echo "check_wheel: $*" >&2; exit 1; }
# The build's PATH and the prefix that runs the wheel's binary (qemu-user for aarch64).
build_path="$PATH"
run=()
case "$arch" in
  x86_64)
    triple=x86_64-unknown-linux-gnu
    work="$target/wheel-check"
    ;;
  aarch64)
    # shellcheck source=scripts/aarch64_env.sh
    source scripts/aarch64_env.sh
    aarch64_setup
    triple="$AARCH64_TRIPLE"
    work="$target/wheel-check-aarch64"
    # maturin and cargo-zigbuild call `cargo` and `rustc` by name: Debian's, which have the
    # arm64 standard library (rustup's come first in PATH otherwise).
    build_path="/usr/bin:$PATH"
    run=("$AARCH64_RUNNER")
    ;;
  *) echo "check_wheel: --target $arch: x86_64 or aarch64" >&2; exit 2 ;;
esac
rm -rf "$work" && mkdir -p "$work"

echo "== maturin, ziglang, auditwheel (build venv $work/build)"
"$py" -m venv "$work/build"
"$work/build/bin/pip" install --quiet --disable-pip-version-check \
  "maturin>=1.5,<2" ziglang auditwheel
"$work/build/bin/maturin" --version

# Two builds, one wheel: the command (bindings "bin", the root crate) and the Python module
# (pyproject.toml: python/, PyO3 abi3), which carries the command in its `npgx.data/scripts/`
# (pip installs it into bin/). maturin puts one kind of artefact in a wheel (PyO3/maturin#368),
# so the command's wheel is built first and only its binary is kept; the crates both builds
# share are compiled once.
build() {
  PATH="$work/build/bin:$build_path" CARGO_TARGET_DIR="$target" \
    "$work/build/bin/maturin" build --release --locked --zig --compatibility "$policy" \
    --target "$triple" "${features[@]}" "$@"
}
echo "== maturin build -b bin (the command) --release --zig --compatibility $policy --target $triple ${features[*]}"
build -b bin -m Cargo.toml --out "$work/command"
scripts_dir=python/npgx.data/scripts
rm -rf "$scripts_dir" && mkdir -p "$scripts_dir"
"$work/build/bin/python" - "$work/command" "$scripts_dir" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "npgx-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".data/scripts/npgx"))
    out = os.path.join(sys.argv[2], "npgx")
    with z.open(name) as src, open(out, "wb") as dst:
        dst.write(src.read())
os.chmod(out, 0o755)
print(f"the command from {os.path.basename(wheel)}: {out}")
PY
# The module's build reads the data folder now and leaves the checkout as it was afterwards.
trap 'rm -rf "$scripts_dir"' EXIT
echo "== maturin build (the module, with the command) --release --zig --compatibility $policy --target $triple ${features[*]}"
rm -f "$target"/wheels/npgx-*"_$arch".whl
build --out "$target/wheels"
rm -rf "$scripts_dir"
trap - EXIT
wheel=$(ls "$target"/wheels/npgx-*"_$arch".whl | head -n 1)
echo "== wheel: $wheel ($(du -h "$wheel" | cut -f1))"
case "$(basename "$wheel")" in
  *-"${policy}_$arch".whl) ;;
  *) fail "the wheel's name does not carry ${policy}_$arch: $(basename "$wheel")" ;;
esac

echo "== auditwheel show"
"$work/build/bin/auditwheel" show "$wheel" | tee "$work/auditwheel.txt"
# auditwheel names the most compatible tag the wheel's symbols allow: the claimed policy passes
# when that tag is the same glibc or older (a 2_17 answer fits a 2_28 wheel; a 2_34 one does not).
"$work/build/bin/python" - "$work/auditwheel.txt" "$policy" "$arch" <<'PY'
import re, sys
text = " ".join(open(sys.argv[1]).read().split())
claimed, arch = sys.argv[2], sys.argv[3]
legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
m = re.search(r'consistent with the following platform tag: "([a-z0-9_]+)_' + arch + '"', text)
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

if [ "$arch" = x86_64 ]; then
  echo "== fresh venv $work/venv"
  "$py" -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
  npgx="$work/venv/bin/npgx"
  python="$work/venv/bin/python"
else
  # pip installs a wheel of another platform only into a directory, told the platform.
  echo "== pip install --platform ${policy}_$arch --target $work/site"
  "$work/build/bin/pip" install --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --platform "${policy}_$arch" --target "$work/site" "$wheel"
  npgx="$work/site/bin/npgx"
  python="$work/build/bin/python"
fi
[ -x "$npgx" ] || fail "the wheel did not install bin/npgx"
# The ELF header's machine: 62 is x86-64, 183 AArch64.
"$python" - "$npgx" "$arch" <<'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(20)
machine = {62: "x86_64", 183: "aarch64"}.get(struct.unpack_from("<H", head, 18)[0])
if head[:4] != b"\x7fELF" or machine != sys.argv[2]:
    sys.exit(f"{sys.argv[1]} is not an {sys.argv[2]} ELF binary ({machine})")
print(f"bin/npgx: ELF for {machine}")
PY
npgx=("${run[@]}" "$npgx")
version=$("${npgx[@]}" --version)
echo "$version"
case "$version" in
  *"features: tables"*) [ -z "${LEAN:-}" ] || fail "a lean wheel with the tables feature" ;;
  *) [ -n "${LEAN:-}" ] || fail "the wheel's npgx lacks the tables feature" ;;
esac

echo "== npgx dump-scan testdata/dump-example (the installed wheel's binary${run:+ under ${run[0]}})"
# The example holds anomalies: exit 1 is the expected answer of the scan and of the merge.
expect1() { set +e; "$@"; code=$?; set -e; [ "$code" = 1 ] || fail "$* exited $code, expected 1"; }
expect1 "${npgx[@]}" dump-scan testdata/dump-example --format json --no-progress -o "$work/scan.json"
if [ -n "${LEAN:-}" ]; then
  set +e; "${npgx[@]}" merge "$work/shard.parquet" 2> "$work/merge.err"; code=$?; set -e
  [ "$code" = 2 ] && grep -q 'needs the `tables` feature' "$work/merge.err" \
    || fail "the lean npgx merge exited $code: $(cat "$work/merge.err")"
  echo "lean: npgx merge refused (exit 2): $(cat "$work/merge.err")"
  echo '{"summary": "not built (lean)"}' > "$work/merge.json"
else
  expect1 "${npgx[@]}" dump-scan testdata/dump-example --format parquet --no-progress -o "$work/shard.parquet"
  expect1 "${npgx[@]}" merge "$work/shard.parquet" --format json -o "$work/merge.json"
fi
"$python" - "$work/scan.json" "$work/merge.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "npgx.dump-scan", d["schema"]
s = d["summary"]
assert s["tensors"] > 0 and s["anomalous_tensors"] > 0, s
m = json.load(open(sys.argv[2]))
print(f"scan from the wheel: {s['tensors']} tensors, {s['anomalous_tensors']} anomalous; "
      f"merge of its shard: {m['summary']} — OK")
PY

# The module, imported where the wheel was installed: the fresh venv (x86_64), or under qemu-user
# an aarch64 CPython (Debian's, unpacked: scripts/aarch64_env.sh aarch64_python) over the --target
# directory. Its document must equal the installed command's (scan.json above); without polars
# its tables raise ImportError; with polars `.tensors` equals the command's shard.
if [ "$arch" = x86_64 ]; then
  module_python=("$python")
  add_polars() { "$work/venv/bin/pip" install --quiet --disable-pip-version-check "polars>=1.0"; }
else
  aarch64_python "$work/python"
  module_python=("${AARCH64_PYTHON[@]}")
  # Every manylinux tag the policy accepts, or pip settles for the newest polars tagged exactly
  # ${policy}_$arch (0.19, which cannot read polars 0.55's Parquet types).
  add_polars() {
    "$work/build/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
      --platform "${policy}_$arch" --platform "manylinux_2_17_$arch" \
      --platform "manylinux2014_$arch" --python-version 3.11 --implementation cp \
      --target "$work/site" "polars>=1.0"
  }
fi
echo "== import npgx (the wheel's module, $arch: without polars, then with it)"
"${module_python[@]}" - "$work/site" "$work/scan.json" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import platform
import npgx
scan = npgx.dump_scan("testdata/dump-example")
assert scan.document == json.load(open(sys.argv[2])), "the module's document differs from the command's"
try:
    scan.tensors
except ImportError as e:
    assert "pip install polars" in str(e), e
else:
    sys.exit("a table without polars installed")
try:
    npgx.dump_scan("testdata/no-such-tree")
except FileNotFoundError:
    pass
else:
    sys.exit("a missing path did not raise FileNotFoundError")
print(f"import npgx {npgx.__version__} on {platform.machine()}: the document equals the command's; "
      "without polars an ImportError; a missing path FileNotFoundError")
PY
if [ -z "${LEAN:-}" ]; then
  add_polars
  "${module_python[@]}" - "$work/site" "$work/shard.parquet" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import platform
import polars as pl
import npgx
t = npgx.dump_scan("testdata/dump-example").tensors
assert t.equals(pl.read_parquet(sys.argv[2])), "the module's table differs from the command's shard"
print(f"import npgx on {platform.machine()}: .tensors equals the command's shard ({t.height} rows)")
PY
fi
echo "wheel OK: $wheel"
