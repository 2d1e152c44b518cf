#!/usr/bin/env python
"""Build a shuffled, pre-tokenized biLM training corpus and its softmax vocabulary.

Reading the raw corpus file by file makes a run with a fixed CPU budget see one domain only
(the shipped biLM never got past the news). This script tokenizes every training file exactly
as the ``bilm_raw_text`` reader does in training (same cleaning, spaCy's rule-based tokenizer,
sentences cut at ``--max-sentence-length``), shuffles the sentences across all files with a
fixed seed, and writes:

* ``OUT/train.txt``: one sentence per line, tokens joined by single spaces (read it back with
  the reader's ``tokenizer: {type: 'whitespace'}`` and ``text_format: 'sentence_per_line'``);
* ``OUT/vocabulary/``: an AllenNLP vocabulary whose ``lm_targets`` namespace holds the
  ``--vocab-size`` most frequent tokens plus ``<S>`` and ``</S>`` (no vocabulary pass needed);
* ``OUT/corpus_stats.json``: files, sentences and tokens per domain.

Held-out files are never read: by default ``wikipedia/wiki_99.txt`` and ``news/test_00.txt``.

``--repeat news=5`` writes every news sentence five times (each copy shuffled in on its own), so
that a run with a fixed budget sees more of a domain that is small in the corpus (news is 8% of
the tokens). The vocabulary is still counted over each sentence once, so it does not change:
a biLM trained on the plain corpus continues on the repeated one with the same softmax.

    python scripts/build_bilm_corpus.py $ELMO_TASKS_SHARED_DATA/lm runs/bilm_corpus   # the lm/ folder of docs/DATA.md
"""

import argparse
import collections
import json
import os
import random
import sys
import time
from multiprocessing import Pool
from typing import Dict, List, Tuple

from elmo_tasks.counted_nouns import counted

HELD_OUT = ("wikipedia/wiki_99.txt", "news/test_00.txt")
DEFAULT_PARTS = ("news/training_0*.txt", "news/abc", "books", "wikipedia")


def tokenize_file(args: Tuple[str, int]) -> Tuple[str, List[str]]:
    path, max_len = args
    from elmo_tasks.tasks.lm.reader import BilmRawTextReader
    from elmo_tasks.tasks.lm.text_source import LineStats

    reader = BilmRawTextReader(
        text_format="running",
        max_sentence_length=max_len,
        drop_wikiextractor_markup=True,
        unescape_html=True,
        fallback_encoding="cp1252",
    )
    counts = {"sentences": 0, "tokens": 0, "split": 0}
    lines = [" ".join(t.text for t in sentence) for sentence in reader._sentences([path], LineStats(), counts)]
    return path, lines


def _parse_repeats(values: List[str]) -> Dict[str, int]:
    repeats: Dict[str, int] = {}
    for value in values:
        domain, _, times = value.partition("=")
        if domain not in ("news", "books", "wikipedia") or not times.isdigit() or int(times) < 1:
            sys.exit(f"--repeat {value!r}: expected DOMAIN=K with DOMAIN one of news, books, wikipedia and K >= 1")
        repeats[domain] = int(times)
    return repeats


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lm_dir", help="the raw corpus folder (news/, books/, wikipedia/)")
    parser.add_argument("output_dir")
    parser.add_argument("--vocab-size", type=int, default=50000)
    parser.add_argument("--max-sentence-length", type=int, default=50)
    parser.add_argument("--seed", type=int, default=2018)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--repeat",
        action="append",
        default=[],
        metavar="DOMAIN=K",
        help="write each sentence of DOMAIN (news, books or wikipedia) K times; the vocabulary is unchanged",
    )
    parser.add_argument(
        "--domains",
        nargs="+",
        choices=("news", "books", "wikipedia"),
        help="only these domains' files (e.g. the news sentences alone, to read them more often in a run of "
        "scripts/train_bilm_full_softmax.py); the vocabulary is then counted over them alone",
    )
    args = parser.parse_args(argv)
    repeats = _parse_repeats(args.repeat)

    from elmo_tasks.atomic_files import WholeFolder
    from elmo_tasks.bilm.characters import BOS_TOKEN, EOS_TOKEN
    from elmo_tasks.tasks.lm.text_source import expand_data_path

    held_out = {os.path.realpath(os.path.join(args.lm_dir, h)) for h in HELD_OUT}
    files = [
        f
        for f in expand_data_path(",".join(os.path.join(args.lm_dir, p) for p in DEFAULT_PARTS))
        if os.path.realpath(f) not in held_out
        and (not args.domains or os.path.relpath(f, args.lm_dir).split(os.sep)[0] in args.domains)
    ]
    started = time.time()
    interactive = sys.stderr.isatty()
    sentences: List[str] = []
    extra_copies: List[str] = []
    per_domain: collections.Counter = collections.Counter()
    per_domain_tokens: collections.Counter = collections.Counter()
    with Pool(args.workers) as pool:
        jobs = [(f, args.max_sentence_length) for f in files]
        for done, (path, lines) in enumerate(pool.imap_unordered(tokenize_file, jobs), start=1):
            domain = os.path.relpath(path, args.lm_dir).split(os.sep)[0]
            per_domain[domain] += len(lines)
            per_domain_tokens[domain] += sum(line.count(" ") + 1 for line in lines)
            sentences.extend(lines)
            extra_copies.extend(lines * (repeats.get(domain, 1) - 1))
            progress = f"{done}/{len(files)} files, {len(sentences):,} sentences, {time.time() - started:.0f}s"
            if interactive:  # one line, rewritten in place
                print(f"\r{progress}", end="", file=sys.stderr, flush=True)
            elif done == len(files) or done % max(1, len(files) // 10) == 0:  # a log: about ten lines
                print(progress, file=sys.stderr, flush=True)
    if interactive:
        print(file=sys.stderr)
    sentences.sort()  # independent of the order the workers finished in
    random.Random(args.seed).shuffle(sentences)

    counts: collections.Counter = collections.Counter()
    for line in sentences:
        counts.update(line.split(" "))
    written = sentences
    if extra_copies:
        written = sorted(sentences + extra_copies)
        random.Random(args.seed).shuffle(written)
    kept = [BOS_TOKEN, EOS_TOKEN] + [
        t for t, _ in counts.most_common(args.vocab_size) if t not in (BOS_TOKEN, EOS_TOKEN)
    ]
    total_tokens = sum(per_domain_tokens.values())
    stats = {
        "files": len(files),
        "held_out": list(HELD_OUT),
        "sentences": len(sentences),
        "tokens": total_tokens,
        "sentences_per_domain": dict(per_domain),
        "tokens_per_domain": dict(per_domain_tokens),
        "repeats": repeats,
        "sentences_written": len(written),
        "tokens_written": sum(line.count(" ") + 1 for line in written),
        "vocab_size": args.vocab_size,
        "seed": args.seed,
        "max_sentence_length": args.max_sentence_length,
    }
    # Written whole or not at all (elmo_tasks/atomic_files.py): a build stopped halfway leaves no train.txt
    # that the reproduction harness, which builds the corpus when it is missing, would take for a whole one.
    with WholeFolder(args.output_dir) as folder:
        with open(os.path.join(folder, "train.txt"), "w", encoding="utf-8") as out:
            for line in written:
                out.write(line + "\n")
        vocab_dir = os.path.join(folder, "vocabulary")
        os.makedirs(vocab_dir)
        with open(os.path.join(vocab_dir, "lm_targets.txt"), "w", encoding="utf-8") as out:
            # AllenNLP's padded-namespace file layout: line 1 is the OOV token, padding is implicit
            out.write("@@UNKNOWN@@\n")
            for token in kept[: args.vocab_size + 2]:
                out.write(token + "\n")
        with open(os.path.join(vocab_dir, "non_padded_namespaces.txt"), "w", encoding="utf-8") as out:
            out.write("*tags\n*labels\n")
        with open(os.path.join(folder, "corpus_stats.json"), "w") as out:
            json.dump(stats, out, indent=2)
    print(
        f"wrote {counted(len(written), 'sentence', grouped=True)} "
        f"({counted(stats['tokens_written'], 'token', grouped=True)}) from {counted(len(files), 'file')} to "
        f"{args.output_dir}/train.txt and a {len(kept):,}-token vocabulary in {time.time() - started:.0f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
