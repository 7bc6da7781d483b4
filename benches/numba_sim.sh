#!/bin/sh
# Runs benches/numba_sim.py on numba-cuda's CUDA simulator, in a virtual environment with numba and
# numpy from PyPI (created on first use). Usage: numba_sim.sh <saxpy n> <matmul n> [reps]
# The environment lives in $NUMBA_SIM_VENV (default: target/numba-sim-venv of the workspace).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv=${NUMBA_SIM_VENV:-$here/../target/numba-sim-venv}
if ! "$venv/bin/python" -c "import numba, numpy" 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check numba numpy >&2
fi
NUMBA_ENABLE_CUDASIM=1 exec "$venv/bin/python" "$here/numba_sim.py" "$@"
