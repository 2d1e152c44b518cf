"""Every predictor refuses inputs over its documented size limit (one line naming the input line,
the size, the limit and what to do), and runs the inputs of a batch in passes of bounded size."""

import inspect
import json

import pytest
from allennlp.predictors import Predictor

from elmo_tasks.commands.coref_score import MAX_CLUSTER_PAIRS
from elmo_tasks.tasks.input_limits import (
    TOKENS_PER_BATCH,
    InputTooLong,
    bounded_batches,
    check_at_most,
    forward_in_bounded_batches,
)
from tests.conftest import ROOT, run_allennlp, untrained_archive

# predictor -> (experiment, the limit's argument, a good input line, one over a limit of 5 tokens and what it says)
TASKS = {
    "ner": (
        "ner_baseline",
        "max_sentence_tokens",
        {"sentence": "John lives in Berlin ."},
        {"sentence": "John lives in Berlin with Anna ."},
        "7 tokens in the sentence",
    ),
    "sst5": (
        "sst5_baseline",
        "max_sentence_tokens",
        {"sentence": "A fine film ."},
        {"sentence": "A fine film with a weak end ."},
        "8 tokens in the sentence",
    ),
    "srl": (
        "srl_baseline",
        "max_sentence_tokens",
        {"sentence": "The cat chased mice .", "verbs": [2]},
        {"sentence": "The cat chased the little mouse .", "verbs": [2]},
        "7 tokens in the sentence",
    ),
    "snli": (
        "snli_baseline",
        "max_sentence_tokens",
        {"premise": "A man plays .", "hypothesis": "A man makes music ."},
        {"premise": "A man plays .", "hypothesis": "A man makes some music ."},
        "6 tokens in the hypothesis",
    ),
    "squad": (
        "squad_baseline",
        "max_passage_tokens",
        {"question": "Who won?", "passage": "The Panthers won ."},
        {"question": "Who won?", "passage": "The Panthers won the game ."},
        "6 tokens in the passage",
    ),
    "coref": (
        "coref_baseline",
        "max_document_tokens",
        {"document": "John said he came ."},
        {"document": "John said he would come ."},
        "6 tokens in the document",
    ),
}


def test_bounded_batches_keep_count_times_longest_within_the_budget():
    lengths = [3, 3, 10, 2, 2, 2, 2, 2, 2]
    batches = list(bounded_batches(lengths, lambda n: n, max_tokens=10))
    assert batches == [[3, 3], [10], [2, 2, 2, 2, 2], [2]]  # 2 x 3, 10 on its own, 5 x 2, the rest
    assert [n for batch in batches for n in batch] == lengths  # every item, in order
    # models comparing every token with every other: count x longest² within max_pairs as well
    assert list(bounded_batches([4, 4, 4, 1], lambda n: n, max_tokens=100, max_pairs=40)) == [[4, 4], [4, 1]]
    assert list(bounded_batches([], lambda n: n)) == []


def test_the_forward_passes_cover_every_instance_in_order():
    class CountingModel:
        def __init__(self):
            self.passes = []

        def forward_on_instances(self, instances):
            self.passes.append(list(instances))
            return [{"echo": instance} for instance in instances]

    model = CountingModel()
    outputs = forward_in_bounded_batches(model, ["aaaa", "bb", "cccccc", "d"], len, max_tokens=8)
    assert [output["echo"] for output in outputs] == ["aaaa", "bb", "cccccc", "d"]
    assert model.passes == [["aaaa", "bb"], ["cccccc"], ["d"]]  # 2 x 6 > 8: "d" waits for the next pass


def test_the_message_says_where_how_long_the_limit_and_what_to_do():
    check_at_most(5, 5, "tokens in the sentence", "the x predictor", "split it", "--raise", lambda: "in.jsonl, line 3")
    with pytest.raises(InputTooLong) as error:
        check_at_most(
            6, 5, "tokens in the sentence", "the x predictor", "split it", "--raise", lambda: "in.jsonl, line 3"
        )
    assert str(error.value) == (
        "in.jsonl, line 3: 6 tokens in the sentence, more than the x predictor's limit of 5, which keeps its "
        "memory bounded (README, 'Input limits'); split it, or raise the limit with --raise on a machine with the "
        "memory for it"
    )


@pytest.mark.parametrize("name", list(TASKS))
def test_predict_refuses_the_line_over_the_limit_naming_it(name, tmp_path, capsys):
    experiment, argument, good, too_long, what = TASKS[name]
    archive = untrained_archive(experiment, tmp_path / "model")
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(f"{json.dumps(good)}\n\n{json.dumps(too_long)}\n")
    limits = json.dumps({argument: 5})
    output = tmp_path / "out.jsonl"
    with pytest.raises(SystemExit) as exit_:
        run_allennlp(
            "predict", str(archive), str(inputs), "--predictor", name, "--predictor-args", limits,
            "--output-file", str(output), "--silent",
        )  # fmt: skip
    assert exit_.value.code == 2
    [message] = capsys.readouterr().err.strip().splitlines()[-1:]
    assert message.startswith(
        f"allennlp predict: {inputs}, line 3: {what}, more than the {name} predictor's limit of 5"
    )
    assert f"""--predictor-args '{{"{argument}": {what.split()[0]}}}'""" in message


def _reference_section(title: str) -> str:
    """A section of docs/REFERENCE.md (the README's reference tables moved there)."""
    text = (ROOT / "docs" / "REFERENCE.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    return text[start : text.index("\n## ", start + 1)]


@pytest.mark.parametrize("name", list(TASKS))
def test_the_reference_gives_every_limit_of_every_predictor_with_its_default(name):
    """Each ``max_*`` / ``tokens_per_batch`` argument of a predictor, with its default, in the table of
    docs/REFERENCE.md, "Input limits"."""
    [row] = [line for line in _reference_section("Input limits").splitlines() if line.startswith(f"| `{name}` |")]
    parameters = inspect.signature(Predictor.by_name(name).__init__).parameters.values()
    limits = {p.name: p.default for p in parameters if p.name.startswith("max_") or p.name == "tokens_per_batch"}
    assert TASKS[name][1] in limits
    for argument, default in limits.items():
        assert f"`{argument}` ({default:,})" in row


def test_the_reference_gives_the_batch_and_scoring_limits():
    section = _reference_section("Input limits")
    assert f"{TOKENS_PER_BATCH:,} padded tokens" in section
    assert f"exceed {MAX_CLUSTER_PAIRS:,}" in section


def _conll_document(path, tokens_per_sentence, sentences, cluster_of_token) -> None:
    """A CoNLL-2012 file of one document; ``cluster_of_token(i)``: the coreference cell of token i."""
    lines = ["#begin document (nw/long/00/doc_0000); part 000"]
    index = 0
    for _sentence in range(sentences):
        for position in range(tokens_per_sentence):
            lines.append(f"nw/long/00/doc_0000 0 {position} word XX * - - - - * {cluster_of_token(index)}")
            index += 1
        lines.append("")
    lines.append("#end document")
    path.write_text("\n".join(lines) + "\n")


def test_coref_conll_refuses_a_document_over_the_predictors_limit_before_predicting(tmp_path, capsys):
    key = tmp_path / "long.gold_conll"
    _conll_document(key, 20, 501, lambda i: "-")  # 10,020 tokens
    output = tmp_path / "predicted.conll"
    archive = untrained_archive("coref_baseline", tmp_path / "model")
    with pytest.raises(SystemExit) as exit_:
        run_allennlp("coref-conll", str(archive), str(key), str(output))
    assert exit_.value.code == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message.startswith(
        f"coref-conll: error: {key}: document '(nw/long/00/doc_0000); part 000': 10,020 tokens in the document, "
        "more than coref-conll's limit of 10,000"
    )
    assert "--predictor-args" not in message and not output.exists()


def test_coref_score_refuses_a_document_with_more_cluster_pairs_than_ceafe_can_align(tmp_path, capsys):
    key = tmp_path / "singletons.gold_conll"
    _conll_document(key, 41, 122, lambda i: f"({i})")  # 5,002 tokens, each its own cluster
    with pytest.raises(SystemExit) as exit_:
        run_allennlp("coref-score", str(key), str(key))
    assert exit_.value.code == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message.startswith(
        f"coref-score: error: {key}: document (nw/long/00/doc_0000); part 000: 5,002 key x 5,002 response "
        "clusters, 25,020,004 pairs for CEAF-e's alignment, more than the limit of 25,000,000 (200 MB"
    )


def test_squad_predict_refuses_a_passage_over_the_predictors_limit_before_predicting(tmp_path, capsys):
    passage = " ".join(["word"] * 5001)
    dataset = {
        "version": "1.1",
        "data": [
            {
                "title": "Long",
                "paragraphs": [
                    {
                        "context": passage,
                        "qas": [{"id": "q1", "question": "Which?", "answers": [{"text": "word", "answer_start": 0}]}],
                    }
                ],
            }
        ],
    }
    dataset_file = tmp_path / "long.json"
    dataset_file.write_text(json.dumps(dataset))
    output = tmp_path / "answers.json"
    archive = untrained_archive("squad_baseline", tmp_path / "model")
    with pytest.raises(SystemExit) as exit_:
        run_allennlp("squad-predict", str(archive), str(dataset_file), str(output))
    assert exit_.value.code == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        f"{dataset_file}: question 'q1': 5,001 tokens in the passage, more than the squad predictor's limit" in message
    )
    assert "--predictor-args" not in message and not output.exists()
