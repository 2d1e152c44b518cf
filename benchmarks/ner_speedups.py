"""NER's three shortcuts against AllenNLP's plain computations, alternated in one process (``--ner-ab``).

``benchmarks/task_train_speed.py ner VARIANT --ner-ab`` builds the model and batches as it always does,
then times, alternately and ``--rounds`` times each, the training pass and a decoding pass (the model in
evaluation mode, as validation runs it) of the model as it is (the CRF's likelihood by forward-backward,
``elmo_tasks/tasks/ner/crf_likelihood.py``; the character CNN once per distinct word,
``elmo_tasks/modules/distinct_words.py``; the batched Viterbi, ``elmo_tasks/tasks/ner/viterbi.py``) and
of the same model with AllenNLP's ``crf(...)``, its character encoder on every position and its
``viterbi_tags``. Each training pass starts from the same weights, optimizer state and random seed, so
the first batch's losses must be the same to float rounding; later ones drift apart, as Adam's first
updates (the gradient's sign, for every weight) amplify rounding differences of near-zero gradients.
The decoding passes run from the same weights and must give the same paths. Both run
in the same process under the same load, which makes their ratio steadier than two processes'.
"""

import copy
import time
from typing import Any, Callable, Dict, List

import torch


def _plain_model(model: Any) -> Callable[[bool], None]:
    """A switch between the model as it is (True) and AllenNLP's computations (False)."""
    from allennlp.modules.token_embedders import TokenCharactersEncoder

    import elmo_tasks.tasks.ner.model as ner_model

    fast = (ner_model.crf_log_likelihood, ner_model.viterbi_paths)
    encoders = [module for module in model.modules() if isinstance(module, TokenCharactersEncoder)]
    hooks = [
        (dict(m._forward_pre_hooks), dict(m._forward_pre_hooks_with_kwargs), dict(m._forward_hooks)) for m in encoders
    ]

    def use(ours: bool) -> None:
        if ours:
            ner_model.crf_log_likelihood, ner_model.viterbi_paths = fast
        else:
            ner_model.crf_log_likelihood = lambda crf, logits, tags, mask: crf(logits, tags, mask)
            ner_model.viterbi_paths = lambda crf, allowed, logits, mask: [p for p, _ in crf.viterbi_tags(logits, mask)]
        for encoder, saved in zip(encoders, hooks, strict=True):
            for table, entries in zip(
                (encoder._forward_pre_hooks, encoder._forward_pre_hooks_with_kwargs, encoder._forward_hooks),
                saved,
                strict=True,
            ):
                table.clear()
                if ours:
                    table.update(entries)

    return use


def compare(
    model: Any, optimizer: Any, batches: List[Dict[str, Any]], step: Callable[[Dict[str, Any]], float], rounds: int
) -> Dict[str, Any]:
    """The alternated passes; the mean CPU seconds per batch of each way and their ratios."""
    use = _plain_model(model)
    weights = copy.deepcopy(model.state_dict())
    optimizer_state = copy.deepcopy(optimizer.state_dict())
    seconds: Dict[str, List[float]] = {"allennlp train": [], "ours train": [], "allennlp decode": [], "ours decode": []}
    for round_index in range(rounds):
        paths: Dict[str, Any] = {}
        losses: Dict[str, List[float]] = {}
        for ours in (False, True):
            name = "ours" if ours else "allennlp"
            use(ours)
            model.load_state_dict(weights)
            model.eval()
            start = time.process_time()
            with torch.no_grad():
                paths[name] = [model(**batch)["tags"] for batch in batches]
            seconds[f"{name} decode"].append((time.process_time() - start) / len(batches))
            model.load_state_dict(weights)
            optimizer.load_state_dict(optimizer_state)
            torch.manual_seed(round_index)
            model.train()
            start = time.process_time()
            losses[name] = [step(batch) for batch in batches]
            seconds[f"{name} train"].append((time.process_time() - start) / len(batches))
            print(
                f"round {round_index + 1} {name}: train {seconds[f'{name} train'][-1]:.4f} CPU s per batch, "
                f"decode {seconds[f'{name} decode'][-1]:.4f}; losses {[round(loss, 3) for loss in losses[name][:4]]}",
                flush=True,
            )
        same_paths = paths["ours"] == paths["allennlp"]
        first = (losses["ours"][0], losses["allennlp"][0])
        print(
            f"round {round_index + 1}: the same decoded paths: {same_paths}; "
            f"first losses {first[0]:.5f} and {first[1]:.5f}"
        )
    means = {name: sum(values) / len(values) for name, values in seconds.items()}
    use(True)
    return {
        "cpu_s_per_batch": {name: round(value, 4) for name, value in means.items()},
        "train_ratio": round(means["allennlp train"] / means["ours train"], 2),
        "decode_ratio": round(means["allennlp decode"] / means["ours decode"], 2),
    }
