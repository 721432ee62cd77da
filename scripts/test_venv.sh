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
# Bytecode, written once per module on its first import, under target/pycache/: uv installs
# sources only, and where the environment sets PYTHONDONTWRITEBYTECODE (CI's machine does) no
# Python process would write a .pyc, so each of the suite's PyTorch processes compiled torch's
# 2 500 modules again (docs/performance.md: the integration suite 1 645 s cold, 801 s with
# bytecode). Only what the tests import is compiled (2 800 modules: the fixture writers, which
# import most of them first, took 6 CPU-seconds more; byte-compiling the whole venv took 101), and
# nothing is written beside the repository's scripts.
# scripts/test.sh sets the same for both of its lanes.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$PWD/target/pycache"
export NPGX_PYTHON="$venv/bin/python"
