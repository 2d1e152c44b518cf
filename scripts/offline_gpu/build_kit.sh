#!/usr/bin/env bash
# Builds .device_kit/ for run_checks.sh: what a GPU machine with its own Python and PyTorch but no
# package index needs to run this checkout's GPU checks (docs/BENCHMARKS.md, "On an offline GPU machine").
#
#   bash scripts/offline_gpu/build_kit.sh [--python-version 3.12] [--vectors FILE]
#
# - .device_kit/site-packages.tar.xz: the packages of scripts/offline_gpu/kit_wheels.txt, installed
#   for the target's Python (wheels from the package index, fairscale built here), their compiled
#   modules stripped of symbols; run_checks.sh unpacks it onto PYTHONPATH.
# - .device_kit/data.tar.xz, for the short NER run: conll2003/eng.{train,testa,testb} from
#   $ELMO_TASKS_SHARED_DATA/conll2003 (licensed data: .device_kit/ is git-ignored; never commit it) and
#   ner_vectors_50d.txt, --vectors (default: the harness's 50-d build in runs/word_vectors/) cut to the
#   CoNLL-2003 words (scripts/offline_gpu/ner_vectors.py).
# Needs this checkout's .venv (its pip downloads) and the package index; nothing here needs the target's Python.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON_VERSION=3.12
VECTORS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --python-version) PYTHON_VERSION="$2"; shift 2 ;;
    --vectors) VECTORS="$2"; shift 2 ;;
    *) echo "build_kit.sh: unknown argument $1 (expected --python-version X.Y or --vectors FILE)" >&2; exit 2 ;;
  esac
done
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)
PLATFORMS=()
for p in manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_24_x86_64 manylinux_2_27_x86_64 \
         manylinux_2_28_x86_64 manylinux_2_31_x86_64 manylinux_2_34_x86_64; do PLATFORMS+=(--platform "$p"); done
TARGET=(--python-version "$PYTHON_VERSION" --implementation cp --only-binary=:all: "${PLATFORMS[@]}")
KIT=.device_kit
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$KIT" "$work/wheels" "$work/site"

echo "build_kit: wheels for Python $PYTHON_VERSION (scripts/offline_gpu/kit_wheels.txt)"
"${PIP[@]}" download --no-deps "${TARGET[@]}" -d "$work/wheels" -r scripts/offline_gpu/kit_wheels.txt
"${PIP[@]}" wheel --no-deps --no-build-isolation -w "$work/wheels" fairscale==0.4.6
"${PIP[@]}" install --no-deps --no-compile "${TARGET[@]}" --target "$work/site" "$work/wheels"/*.whl
if command -v strip >/dev/null 2>&1; then
  find "$work/site" -name '*.so*' -type f -exec strip --strip-unneeded {} + 2>/dev/null || true
fi
find "$work/site" -name __pycache__ -type d -prune -exec rm -rf {} +
# botocore's AWS service descriptions (15 MB, already compressed): cached_path imports boto3, but nothing
# here talks to AWS; the files boto3 reads on import stay
find "$work/site/botocore/data" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
tar -C "$work/site" -cJf "$KIT/site-packages.tar.xz" .
echo "build_kit: $KIT/site-packages.tar.xz ($(du -h "$KIT/site-packages.tar.xz" | cut -f1))"

conll="${ELMO_TASKS_SHARED_DATA:-}/conll2003"
rm -f "$KIT/data.tar.xz"
if [ -z "$VECTORS" ]; then
  VECTORS=$(ls runs/word_vectors/bilm_corpus_word2vec_50d_lowercased_*.txt 2>/dev/null | head -n 1 || true)
fi
if [ -z "${ELMO_TASKS_SHARED_DATA:-}" ] || [ ! -f "$conll/eng.train" ]; then
  echo "build_kit: ELMO_TASKS_SHARED_DATA/conll2003/eng.train not found; run_checks.sh will skip the NER run"
elif [ -z "$VECTORS" ]; then
  echo "build_kit: no 50-d vectors (pass --vectors FILE, or build them: docs/WORD_VECTORS.md); run_checks.sh will skip the NER run"
else
  mkdir -p "$work/data/conll2003"
  cp "$conll"/eng.train "$conll"/eng.testa "$conll"/eng.testb "$work/data/conll2003/"
  .venv/bin/python scripts/offline_gpu/ner_vectors.py "$VECTORS" "$work/data/ner_vectors_50d.txt" \
    "$work"/data/conll2003/eng.train "$work"/data/conll2003/eng.testa "$work"/data/conll2003/eng.testb
  tar -C "$work/data" -cJf "$KIT/data.tar.xz" .
  echo "build_kit: $KIT/data.tar.xz ($(du -h "$KIT/data.tar.xz" | cut -f1))"
fi
echo "build_kit: $KIT holds $(du -sh "$KIT" | cut -f1); the checkout's files: $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -n 1 | cut -f1) bytes"
