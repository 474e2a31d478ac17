#!/usr/bin/env bash
# Every GPU check in one call of under 8 minutes on a machine with one NVIDIA GPU (docs/benchmarks.md,
# "GPU checks"): the tests marked gpu, then the shared-GPU side by side at the paper's sizes.
#
#   bash benchmarks/gpu_checks.sh [OUT_DIR]
#
# Where the machine lacks the project's dependencies (a GPU node without internet), put their
# wheels in .whl/ first (docs/benchmarks.md says how): they are installed into /tmp/site.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/gpu_checks}}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        || exit 1
    export PYTHONPATH=/tmp/site:$PWD/src PATH=/tmp/site/bin:$PATH
else
    export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1
{
    echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%FT%TZ)"
    nvidia-smi -L; python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
    nproc
} 2>&1 | tee "$OUT/machine.txt"

step() { echo; echo "== $*"; "$@"; }
{
    step timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_branches.py tests/test_gpu_ready.py
    # translation at the paper's size (V = 8,000, H = 256, 2 layers, B = 16)
    step timeout 200 python3 benchmarks/shared_gpu.py --device cuda --vocab 8000 --hidden 256 --batch 16 \
        --processes 1 2 4 8 16 --seconds 12
    # classification at 20 Newsgroups' size (posts cut at 200 positions, B = 32)
    step timeout 150 python3 benchmarks/shared_gpu.py --device cuda --task classification --vocab 20000 --hidden 256 \
        --batch 32 --src-len 200 --processes 1 4 8 16 --seconds 10
} 2>&1 | tee "$OUT/gpu_checks.log"
