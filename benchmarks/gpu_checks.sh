#!/usr/bin/env bash
# Every GPU check in one call of under 8 minutes on a machine with one NVIDIA GPU (docs/benchmarks.md,
# "GPU checks"), by section:
#   tests    the tests marked gpu
#   stacked  stacked training against separate runs (benchmarks/stacked.py), SMS- and 20NG-like rows;
#            translation stacks at Multi30k's size (benchmarks/stacked_translation.py: V = 8,000,
#            H = 256, 2 layers, dropout 0.5, B = 16 per member; K = 8 and 16; goals 3x, 5x)
#   shared   training processes sharing the GPU (benchmarks/shared_gpu.py) at the paper's sizes
#   sms      a paper-size SMS spam part: its six standard runs (1,000 steps) as six jobs sharing the
#            GPU, as one stack of six, and as two stacks of three sharing it (SMS_HOW picks:
#            "separate 6 3"); reads .devdata/sms_spam, a copy of ../shared/data/sms_spam
#   preflight  config/paper.yaml's preflight on the GPU: every dataset's job minutes and the
#            config's GPU-hours (docs/slurm.md quotes its Total line), and what it measured as rows
#            of src/attnlearn/cost/gpu_rates.tsv in OUT/preflight_rates.tsv, to append to that table
#            (docs/benchmarks.md, "What the paper costs on a GPU", says how)
#   m30k20 (not in the default; first in any lease) Multi30k at the paper's 20 epochs
#            (config/multi30k_epochs20.yaml), parts M30K_PARTS (default "1") one at a time, each kept in
#            OUT/kept/multi30k/partR and packed in OUT as it ends; stops at M30K_TIMEOUT seconds (default
#            560) and the same command resumes on a warm machine (M30K_UNLOCK=1 after a kill);
#            reads .devdata/multi30k, a copy of ../shared/data/multi30k
#   ng_block (not in the default) 20 Newsgroups' replicates 4-10 (paper_row.py --parts
#            4-10, 14 trainings sharing the GPU), kept in OUT/kept/newsgroups/parts4-10 when they
#            finish within NG_TIMEOUT seconds (default 540; not yet run on a GPU); reads
#            .devdata/20newsgroups; set ATTNLEARN_COMMIT where the copy's git metadata is stale
#   ng_planned (not in the default) 20 Newsgroups' replicates 11-20 with a frozen run each, under the
#            two plans committed before them (docs/plans/newsgroups_header.yaml, newsgroups_table10.yaml;
#            reproduction/rows/newsgroups/README.md), kept in OUT/kept/newsgroups/parts11-20 when they finish
#            within NG_TIMEOUT seconds (the same command resumes them); .devdata/20newsgroups as ng_block
#   ng_headers (not in the default) the header row (newsgroups_no_headers, config/paper_cpu.yaml)
#            parts 1-3, one at a time on the GPU (an H100 ran a 20 Newsgroups part in 212-385 s),
#            each kept in OUT/kept/newsgroups_no_headers/partR and packed in OUT/packed as it
#            ends; the rest stops at NG_TIMEOUT seconds (the same command resumes it);
#            NG_AT_ONCE=3 runs the three side by side on the 16 cores instead
#
#   bash benchmarks/gpu_checks.sh [OUT_DIR] [SECTION ...]     (default: every section)
#
# Where the machine lacks the project's dependencies (a GPU node without internet), put their
# wheels in .whl/ first (docs/benchmarks.md says how): they are installed into /tmp/site.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/gpu_checks}}
shift || true
SECTIONS=${*:-tests stacked shared sms preflight}
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
    echo "commit ${ATTNLEARN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo "?")}, $(date -u +%FT%TZ), sections: $SECTIONS"
    nvidia-smi -L; python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
    nproc
} 2>&1 | tee "$OUT/machine.txt"

step() { echo; echo "== $*"; "$@"; }

tests() {
    step timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_branches.py tests/test_gpu_ready.py \
        tests/test_stacked.py tests/test_stacked_seq2seq.py
}

stacked() {  # SMS-spam-like rows (5-60 tokens), 20-Newsgroups-like (20-200), Multi30k-sized translation
    step timeout 80 python3 benchmarks/stacked.py --device cuda --stacks 1 4 16 --vocab 8000 --embed 300 \
        --hidden 256 --min-len 5 --max-len 60 --steps 10
    step timeout 80 python3 benchmarks/stacked.py --device cuda --stacks 1 4 16 --vocab 20000 --embed 300 \
        --hidden 256 --min-len 20 --max-len 200 --steps 5
    step timeout 150 python3 benchmarks/stacked_translation.py --device cuda --stacks 1 8 16 --steps 10 --repeats 2
}

shared() {  # translation (V = 8,000, H = 256, 2 layers, B = 16); classification at 20 Newsgroups' size
    step timeout 70 python3 benchmarks/shared_gpu.py --device cuda --vocab 8000 --hidden 256 --batch 16 \
        --processes 1 4 8 --seconds 5
    step timeout 70 python3 benchmarks/shared_gpu.py --device cuda --task classification --vocab 20000 --hidden 256 \
        --batch 32 --src-len 200 --processes 1 4 8 --seconds 5
}

sms() {
    [ -d .devdata/sms_spam ] || { echo "sms: no .devdata/sms_spam"; return 1; }
    python3 paper_rows/local_sources.py config/paper.yaml .devdata > "$OUT/local.yaml"
    local runs how stack start
    runs=$(for s in 1 2 3 4 5 6; do echo "results/runs/sms_spam/standard-s$s/train_log.parquet"; done)
    for how in ${SMS_HOW:-separate 6 3}; do
        stack=$([ "$how" = separate ] || echo ", stack: $how")
        echo; echo "== SMS spam, six standard runs, ${how/#[0-9]/stacks of $how}"
        start=$SECONDS
        timeout 120 python3 -m snakemake -s Snakefile $runs -d "/tmp/sms_$how" --cores 8 --resources gpu=6 \
            --configfile "$OUT/local.yaml" --config 'only=[sms_spam]' device=cuda \
            "override={train: {steps: 1000$stack}}" > "$OUT/sms_$how.log" 2>&1
        echo "rc $?, $((SECONDS - start)) s wall"; tail -2 "$OUT/sms_$how.log"
        grep -h -v "^s" /tmp/sms_$how/results/benchmarks/train/sms_spam/*.tsv | cut -f1,10
    done
}

preflight() {  # before any download: the datasets at appendix Table 9's sizes (sms_spam at its 3,500)
    step timeout 240 python3 -m snakemake -s Snakefile -f preflight -d /tmp/preflight --cores 4 \
        --configfile config/paper.yaml --config device=cuda
    cp /tmp/preflight/results/preflight/report.md "$OUT/preflight.md" && cat "$OUT/preflight.md"
    cp /tmp/preflight/results/preflight/rates.tsv "$OUT/preflight_rates.tsv"  # the measured rates, the table's format
}

m30k20() {
    [ -d .devdata/multi30k ] || { echo "m30k20: no .devdata/multi30k"; return 1; }
    local parts=() r
    for r in ${M30K_PARTS:-1}; do parts+=("multi30k:$r"); done
    step python3 paper_rows/parallel_parts.py "${parts[@]}" -d /tmp/parts_m30k20 --config config/multi30k_epochs20.yaml \
        --at-once 1 --device cuda --cores "$(nproc)" --data .devdata --out "$OUT/kept" --pack "$OUT" \
        --stop-after "${M30K_TIMEOUT:-560}" --report-every 30 ${M30K_UNLOCK:+--unlock}
}

ng_block() {
    [ -d .devdata/20newsgroups ] || { echo "ng_block: no .devdata/20newsgroups"; return 1; }
    step timeout "${NG_TIMEOUT:-540}" python3 paper_rows/paper_row.py newsgroups -d /tmp/row_ng_b --parts 4-10 \
        --device cuda --cores "$(nproc)" --data .devdata --out "$OUT/kept"
}

ng_planned() {
    [ -d .devdata/20newsgroups ] || { echo "ng_planned: no .devdata/20newsgroups"; return 1; }
    step timeout "${NG_TIMEOUT:-540}" python3 paper_rows/paper_row.py newsgroups -d /tmp/row_ng_p --parts 11-20 \
        --variants frozen --plan docs/plans/newsgroups_header.yaml --plan docs/plans/newsgroups_table10.yaml \
        --device cuda --cores "$(nproc)" --data .devdata --out "$OUT/kept"
}

ng_headers() {
    [ -d .devdata/20newsgroups ] || { echo "ng_headers: no .devdata/20newsgroups"; return 1; }
    step python3 paper_rows/parallel_parts.py newsgroups_no_headers:1 newsgroups_no_headers:2 newsgroups_no_headers:3 \
        -d /tmp/parts_ngh --at-once "${NG_AT_ONCE:-1}" --device cuda --cores "$(nproc)" --data .devdata --out "$OUT/kept" \
        --pack "$OUT/packed" --stop-after "${NG_TIMEOUT:-540}"
}

for section in $SECTIONS; do "$section"; done 2>&1 | tee "$OUT/gpu_checks.log"
