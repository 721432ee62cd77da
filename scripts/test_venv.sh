# Sourced by scripts/test.sh and scripts/test_slow.sh (not run): the test venv ($NPGX_VENV,
# default .venv) with scripts/requirements-test.txt installed, exported as NPGX_PYTHON.
venv="${NPGX_VENV:-.venv}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r scripts/requirements-test.txt
export NPGX_PYTHON="$venv/bin/python"
