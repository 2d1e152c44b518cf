#!/usr/bin/env bash
# Moves the shipped files that run_checks.sh does not read (the six task models and the biLM's softmax,
# about 59 MB) out of the checkout, so that copying it to a GPU machine copies about 20 MB, and puts
# them back:
#
#   bash scripts/offline_gpu/set_aside.sh aside [FOLDER]   # default FOLDER: /tmp/elmo_tasks_set_aside
#   bash scripts/offline_gpu/set_aside.sh back [FOLDER]
#
# `back` takes each file from FOLDER, or, where it is not there (FOLDER lost), from git (`git checkout`):
# they are tracked files, so nothing set aside can be lost.
set -euo pipefail
cd "$(dirname "$0")/../.."
FILES=(
  elmo_tasks/pretrained/coref/model.tar.gz
  elmo_tasks/pretrained/ner/model.tar.gz
  elmo_tasks/pretrained/snli/model.tar.gz
  elmo_tasks/pretrained/squad/model.tar.gz
  elmo_tasks/pretrained/srl/model.tar.gz
  elmo_tasks/pretrained/sst5/model.tar.gz
  elmo_tasks/pretrained/bilm_small/softmax.npz
)
action="${1:-}"
folder="${2:-/tmp/elmo_tasks_set_aside}"
case "$action" in
  aside)
    for file in "${FILES[@]}"; do
      if [ -f "$file" ]; then
        mkdir -p "$folder/$(dirname "$file")"
        mv "$file" "$folder/$file"
      fi
    done
    echo "set_aside: ${#FILES[@]} files in $folder; put them back with: bash scripts/offline_gpu/set_aside.sh back $folder"
    ;;
  back)
    for file in "${FILES[@]}"; do
      if [ -f "$folder/$file" ]; then
        mv "$folder/$file" "$file"
      elif [ ! -f "$file" ]; then
        git checkout -- "$file"
      fi
    done
    git diff --quiet -- "${FILES[@]}" || { echo "set_aside: the files put back differ from git's: git diff --stat" >&2; exit 1; }
    echo "set_aside: the ${#FILES[@]} files are back"
    ;;
  *)
    echo "set_aside.sh: say aside or back (and optionally the folder), e.g. bash scripts/offline_gpu/set_aside.sh aside" >&2
    exit 2
    ;;
esac
