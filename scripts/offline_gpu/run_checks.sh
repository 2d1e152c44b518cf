#!/usr/bin/env bash
# The GPU checks in one command, for a machine with its own Python and PyTorch and no package index
# (docs/BENCHMARKS.md, "On an offline GPU machine"). Run from anywhere; the results go to $OUT
# (default runs/offline_gpu/), eight files at most:
#   summary.txt     one line per step: its name, exit status and seconds
#   env.log         Python, torch, the device, and whether AllenNLP and elmo_tasks import
#   cuda_tests.log  pytest tests/cuda (every experiment on the GPU against the CPU)
#   gpu_check.log, gpu_check.json   benchmarks/gpu_check.py: its table and rows
#   embed_profile.log   benchmarks/gpu_embed_profile.py: where elmo-embed's GPU time goes, ours and AllenNLP's
#   harness.log, harness_report.md, harness_records/   only if asked for (below): scripts/reproduce.py's smoke budget
#   ner.log, ner_metrics.json   a short run of the paper's NER recipe (experiments/ner_elmo.jsonnet,
#                   ELMO_TASKS_DATA=full) on the GPU, then `allennlp evaluate --cuda-device 0` on eng.testb
# Each step has its own time limit, and one that fails or runs out of time does not stop the next.
# ELMO_TASKS_CHECK_STEPS chooses steps (default "env cuda_tests gpu_check embed_profile ner"; up to about
# 20 minutes in all, under 5 on an H200): e.g. "env cuda_tests ner" and then "env gpu_check embed_profile"
# as two commands of under 10 minutes each.
# ELMO_TASKS_CHECK_SMOKE=1 runs the same steps on the CPU at tiny sizes on the fixtures (what the tests run).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-runs/offline_gpu}"
KIT="${ELMO_TASKS_KIT:-.device_kit}"
PYTHON="${PYTHON:-python3}"
SMOKE="${ELMO_TASKS_CHECK_SMOKE:-0}"
STEPS=" ${ELMO_TASKS_CHECK_STEPS:-env cuda_tests gpu_check embed_profile ner} "
NER_EPOCHS="${NER_EPOCHS:-2}"  # NER_DEVICE: where eng.testb is scored (default 0, the first GPU)
mkdir -p "$OUT"
: > "$OUT/summary.txt"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# unpack ARCHIVE FOLDER: by Python's tarfile, which reads .xz wherever Python has lzma (no xz program needed)
unpack() {
  "$PYTHON" -c 'import sys, tarfile
with tarfile.open(sys.argv[1]) as archive:
    archive.extractall(sys.argv[2], **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))' "$1" "$2" ||
    { echo "run_checks.sh: cannot unpack $1: build it again (scripts/offline_gpu/build_kit.sh)" | tee -a "$OUT/summary.txt" >&2; exit 2; }
}
if [ -f "$KIT/site-packages.tar.xz" ]; then
  unpack "$KIT/site-packages.tar.xz" "$scratch/site"
  export PYTHONPATH="$scratch/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1

# step NAME SECONDS COMMAND...: runs COMMAND under a time limit, its output in $OUT/NAME.log (if NAME is asked for)
step() {
  local name=$1 limit=$2 start rc
  shift 2
  [[ "$STEPS" == *" $name "* ]] || return 0
  start=$(date +%s)
  timeout --signal=TERM --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  echo "$name exit $rc $(( $(date +%s) - start )) s$([ $rc -eq 124 ] && echo " (out of its $limit s)")" | tee -a "$OUT/summary.txt"
}

step env 120 bash -c '
  nvidia-smi 2>/dev/null || echo "no nvidia-smi"
  "$0" -c "import sys, torch; print(sys.version); print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda);
print(\"device\", torch.cuda.get_device_name(0) if torch.cuda.is_available() else \"none: torch sees no GPU\")
import allennlp.commands, elmo_tasks.plugin; print(\"allennlp and elmo_tasks import\")"' "$PYTHON"

step cuda_tests 240 "$PYTHON" -m pytest tests/cuda -q -p no:cacheprovider -p no:randomly

if [ "$SMOKE" = 1 ]; then
  step gpu_check 300 "$PYTHON" benchmarks/gpu_check.py --device cpu --size tiny --json "$OUT/gpu_check.json"
  step embed_profile 120 "$PYTHON" benchmarks/gpu_embed_profile.py --device cpu --size tiny --sentences 32 --batch-sizes 8,32
else
  step gpu_check 380 "$PYTHON" benchmarks/gpu_check.py --json "$OUT/gpu_check.json"
  step embed_profile 240 "$PYTHON" benchmarks/gpu_embed_profile.py
fi

# Not by default: the harness's smoke budget (NER and SST-5 on the fixtures, one epoch each), whose records
# show each run's commands, the evaluation's --cuda-device included.
step harness 300 "$PYTHON" scripts/reproduce.py ner sst5 --budget smoke --runs-dir "$scratch/harness_runs" \
  --records-dir "$OUT/harness_records" --results "$OUT/harness_report.md"

# The short NER run: the recipe's config as it is, a few epochs, scored on the test file on the device.
if [[ "$STEPS" != *" ner "* ]]; then
  exit 0
elif [ "$SMOKE" = 1 ]; then
  ner_env=(ELMO_TASKS_DATA=fixtures)
  test_file=fixtures/ner/test.txt
  device=-1
elif [ -f "$KIT/data.tar.xz" ]; then
  unpack "$KIT/data.tar.xz" "$scratch/data"
  ner_env=(ELMO_TASKS_DATA=full "ELMO_TASKS_SHARED_DATA=$scratch/data" "ELMO_TASKS_WORD_VECTORS=$scratch/data/ner_vectors_50d.txt")
  test_file="$scratch/data/conll2003/eng.testb"
  device="${NER_DEVICE:-0}"
else
  echo "ner skipped: no $KIT/data.tar.xz (scripts/offline_gpu/build_kit.sh makes it where the CoNLL-2003 files are)" | tee -a "$OUT/summary.txt"
  exit 0
fi
step ner 300 env "${ner_env[@]}" bash -c '
  set -e
  "$0" -m allennlp train experiments/ner_elmo.jsonnet -s "$1/ner" -o "{\"trainer.num_epochs\": $2}"
  "$0" -m allennlp evaluate "$1/ner/model.tar.gz" "$3" --cuda-device "$4" --output-file "$1/test_metrics.json"
  "$0" -c "
import glob, json, sys
run = sys.argv[1]
epochs = [json.load(open(p)) for p in sorted(glob.glob(run + \"/ner/metrics_epoch_*.json\"))]
print(json.dumps({\"epochs\": epochs, \"test\": json.load(open(run + \"/test_metrics.json\"))}, indent=1))
" "$1" > "$5/ner_metrics.json"' "$PYTHON" "$scratch" "$NER_EPOCHS" "$test_file" "$device" "$OUT"
