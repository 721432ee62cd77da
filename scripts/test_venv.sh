# Sourced by scripts/test.sh and scripts/test_slow.sh (not run): the test venv ($NPGX_VENV,
# default .venv) with scripts/requirements-test.txt installed, exported as NPGX_PYTHON.
#
# The packages are installed with uv (from PyPI, installed into the venv by pip): it downloads in
# parallel and keeps a wheel cache (~/.cache/uv) that a new venv links from, where pip here caches
# nothing. docs/performance.md: a new venv took 5 min 12 s with pip on an empty machine (torch pulls
# about 3 GB of CUDA wheels), 41 s with uv and an empty cache, 4 s with uv's cache warm.
venv="${NPGX_VENV:-.venv}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if [ ! -x "$venv/bin/uv" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'uv>=0.5'
fi
"$venv/bin/uv" pip install --quiet --python "$venv/bin/python" -r scripts/requirements-test.txt
# Bytecode for every installed module, written once here: uv installs sources only, and where the
# environment sets PYTHONDONTWRITEBYTECODE (CI's machine does) no Python process ever writes a .pyc,
# so each of the suite's hundreds of PyTorch processes compiled torch's 2 500 modules again
# (docs/performance.md: the integration suite 1 645 s cold without, 801 s with). Up-to-date files
# are skipped, so a warm venv costs seconds. It is an optimisation only: a few of torch's own test
# helpers are written for newer Pythons and do not compile, so its exit status is not checked.
"$venv/bin/python" -m compileall -q -j 0 "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null 2>&1 || true
export NPGX_PYTHON="$venv/bin/python"
