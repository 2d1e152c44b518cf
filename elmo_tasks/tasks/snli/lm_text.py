"""The text of an SNLI data path, one sentence per line, for fine-tuning a biLM on it.

The paper (appendix) fine-tuned its biLM on each task's training text before training the task
model. The biLM training reader (``bilm_raw_text`` with ``text_format: sentence_per_line``) reads
the file this writes. The pairs are those the ``snli_jsonl`` reader trains on for the same path
(its ``#train``/``#holdout``/``#sample=P`` suffixes, pairs with a gold label), so a biLM fine-tuned
on ``dev.jsonl.gz#train`` never sees the held-out tenth or the test set. Each distinct premise is
written once (SNLI gives every caption several hypotheses), every hypothesis once per pair.
"""

from pathlib import Path
from typing import Any, Dict, Union

from elmo_tasks.tasks.snli.reader import selected_pairs


def write_lm_text(file_path: str, output: Union[str, Path], holdout_modulus: int = 10) -> Dict[str, int]:
    """Writes the sentences of ``file_path``'s selected pairs to ``output``; returns the counts."""
    counts: Dict[str, Any] = {}
    premises_seen = set()
    pairs = sentences = 0
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", encoding="utf-8") as out:
        for _, pair in selected_pairs(file_path, holdout_modulus, counts):
            pairs += 1
            premise, hypothesis = (" ".join(pair[key].split()) for key in ("premise", "hypothesis"))
            if premise and premise not in premises_seen:
                premises_seen.add(premise)
                out.write(premise + "\n")
                sentences += 1
            if hypothesis:
                out.write(hypothesis + "\n")
                sentences += 1
    return {"pairs": pairs, "sentences": sentences, "distinct_premises": len(premises_seen)}
