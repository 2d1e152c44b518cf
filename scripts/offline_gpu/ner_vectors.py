"""Write the lines of a word-vector file whose word occurs in CoNLL-2003 files, lowercased.

The NER experiments (``ELMO_TASKS_DATA=full``) give a row of their vocabulary to every word of
eng.train, eng.testa and eng.testb that has a vector, lowercased as their indexer lowercases, and
nothing else of the file is read; so a file cut to those words trains the same model. build_kit.sh
uses it to carry 50-d vectors to a GPU machine in a few MB instead of about 40.

    python scripts/offline_gpu/ner_vectors.py VECTORS OUT eng.train eng.testa eng.testb
"""

import argparse
import sys
from typing import Iterable, List, Optional, Set


def conll_words(paths: Iterable[str]) -> Set[str]:
    """The lowercased first column of every token line (not ``-DOCSTART-`` lines, not blank lines)."""
    words: Set[str] = set()
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                if fields and fields[0] != "-DOCSTART-":
                    words.add(fields[0].lower())
    return words


def keep_vectors(vectors: str, out: str, words: Set[str]) -> int:
    """Copies the lines of ``vectors`` whose first field is in ``words`` to ``out``, unchanged; their count."""
    kept = 0
    with open(vectors, encoding="utf-8") as source, open(out, "w", encoding="utf-8") as target:
        for line in source:
            word = line.split(" ", 1)[0]
            if word in words:
                target.write(line)
                kept += 1
    return kept


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vectors", help="a GloVe-format text file (word v1 ... vd per line)")
    parser.add_argument("out", help="where to write the kept lines")
    parser.add_argument("conll", nargs="+", help="CoNLL-2003 files (eng.train eng.testa eng.testb)")
    args = parser.parse_args(argv)
    kept = keep_vectors(args.vectors, args.out, conll_words(args.conll))
    print(f"ner_vectors: kept {kept} vectors of {args.vectors} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
