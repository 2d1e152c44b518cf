"""What goes wrong with a component is one line naming it: no model, a missing or broken archive, an
archive of another task, a Doc over the task predictor's limit, a setting out of range, no GPU."""

import importlib

import pytest
import spacy
import torch
from spacy.util import ignore_error

from elmo_tasks.spacy_pipes import DocTooLong, ElmoPipeError
from tests.spacy_pipes.conftest import TASKS

COMPONENTS = list(TASKS)


def _one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("component", COMPONENTS)
def test_no_model_says_how_to_give_one(component):
    with pytest.raises(ElmoPipeError) as error:
        spacy.blank("en").add_pipe(component)
    assert _one_line(error) == (
        f"{component}: no model given; name a trained model's archive, e.g. "
        f'nlp.add_pipe("{component}", config={{"model": "path/to/model.tar.gz"}})'
    )


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_missing_archive(component, tmp_path):
    missing = tmp_path / "no" / "model.tar.gz"
    with pytest.raises(ElmoPipeError) as error:
        spacy.blank("en").add_pipe(component, config={"model": str(missing)})
    assert _one_line(error).startswith(f"{component}: {missing} does not exist; expected a model.tar.gz")


def test_a_file_that_is_no_archive(tmp_path):
    broken = tmp_path / "model.tar.gz"
    broken.write_text("not an archive")
    with pytest.raises(ElmoPipeError) as error:
        spacy.blank("en").add_pipe("elmo_ner", config={"model": str(broken)})
    assert _one_line(error).startswith(f"elmo_ner: {broken} is not a model archive")


@pytest.mark.parametrize("component", COMPONENTS)
def test_an_archive_of_another_task_names_the_component_that_takes_it(component, archive):
    other = COMPONENTS[(COMPONENTS.index(component) + 1) % len(COMPONENTS)]
    experiment, _ = TASKS[other]
    with pytest.raises(ElmoPipeError) as error:
        spacy.blank("en").add_pipe(component, config={"model": str(archive(experiment))})
    message = _one_line(error)
    assert message.startswith(f"{component}: {archive(experiment)} holds ")
    assert f"; {component} needs " in message and message.endswith(f'that one goes to nlp.add_pipe("{other}", ...)')


def test_an_archive_no_component_takes(archive):
    with pytest.raises(ElmoPipeError) as error:
        spacy.blank("en").add_pipe("elmo_sst", config={"model": str(archive("snli_baseline"))})
    held = "an SNLI model (`snli_model`)"
    assert (
        _one_line(error) == f"elmo_sst: {archive('snli_baseline')} holds {held}; elmo_sst needs an SST-5 model archive"
    )


def test_the_limits_are_the_predictors():
    from elmo_tasks.spacy_pipes import coref, elmo, ner, srl, sst
    from elmo_tasks.tasks.coref import predictor as coref_predictor
    from elmo_tasks.tasks.ner import predictor as ner_predictor
    from elmo_tasks.tasks.srl import predictor as srl_predictor
    from elmo_tasks.tasks.sst import predictor as sst_predictor

    assert ner.MAX_SENTENCE_TOKENS == ner_predictor.MAX_SENTENCE_TOKENS == elmo.MAX_SENTENCE_TOKENS
    assert srl.MAX_SENTENCE_TOKENS == srl_predictor.MAX_SENTENCE_TOKENS
    assert sst.MAX_SENTENCE_TOKENS == sst_predictor.MAX_SENTENCE_TOKENS
    assert coref.MAX_DOCUMENT_TOKENS == coref_predictor.MAX_DOCUMENT_TOKENS
    assert coref.MAX_PADDED_TOKENS == coref_predictor.MAX_PADDED_TOKENS


TEXT = "Marta Velkin visited Port Elby on Monday. She met John Smith there, and he liked her."  # 8 + 11 words


@pytest.mark.parametrize("component", ["elmo_ner", "elmo_srl"])
def test_a_sentence_over_the_limit(component, archive):
    config = {"model": str(archive(TASKS[component][0])), "max_sentence_tokens": 11}
    nlp = spacy.blank("en")
    nlp.add_pipe(component, config=config)
    with pytest.raises(DocTooLong) as error:
        nlp(TEXT)
    assert _one_line(error) == (
        f"{component}: the Doc 'Marta Velkin visited Port Elby on Monday...': 19 tokens in the sentence, more than "
        "the limit of 11 (max_sentence_tokens), which keeps memory bounded (docs/REFERENCE.md, 'Input limits'); "
        f'split the text into sentences first: nlp.add_pipe("sentencizer", before="{component}"), or raise the '
        'limit on a machine with the memory for it: config={"max_sentence_tokens": 19}'
    )
    nlp.add_pipe("sentencizer", before=component)
    assert nlp(TEXT)  # its sentences are within the limit
    with pytest.raises(DocTooLong, match=r"Monday...', sentence 2: 13 tokens in the sentence, .* split the sentence"):
        nlp(TEXT.replace(" there", " there and there"))


def test_a_doc_over_the_limits(archive):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_sst", config={"model": str(archive("sst5_elmo")), "max_sentence_tokens": 18})
    with pytest.raises(DocTooLong, match=r"elmo_sst: the Doc .*: 19 tokens, more than the limit of 18 .*give its"):
        nlp(TEXT)
    config = {"model": str(archive("coref_elmo")), "max_document_tokens": 18}
    coref = spacy.blank("en")
    coref.add_pipe("elmo_coref", config=config)
    with pytest.raises(DocTooLong, match=r"19 tokens, more than the limit of 18 \(max_document_tokens\)"):
        coref(TEXT)
    coref = spacy.blank("en")
    coref.add_pipe("elmo_coref", config={"model": str(archive("coref_elmo")), "max_padded_tokens": 21})
    with pytest.raises(
        DocTooLong, match=r"22 padded tokens \(2 sentences x the longest, 11 tokens: .*\(max_padded_tokens\)"
    ):
        coref(TEXT)


def test_the_error_handler_can_skip_a_doc_over_the_limit(archive):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_ner", config={"model": str(archive("ner_elmo")), "max_sentence_tokens": 10})
    nlp.set_error_handler(ignore_error)
    docs = list(nlp.pipe(["Marta met John.", TEXT, "Shares of Pellon Group fell."], batch_size=3))
    assert [doc.text for doc in docs] == ["Marta met John.", "Shares of Pellon Group fell."]
    assert all(token.ent_iob_ for doc in docs for token in doc)  # annotated


@pytest.mark.parametrize(
    "config, message",
    [
        ({"max_sentence_tokens": 0}, "elmo_ner: max_sentence_tokens must be a positive whole number, got 0"),
        ({"cuda_device": -2}, "elmo_ner: cuda_device must be -1 (the CPU) or a GPU id from 0, got -2"),
    ],
)
def test_bad_settings(config, message, archive):
    with pytest.raises(ElmoPipeError) as error:
        spacy.blank("en").add_pipe("elmo_ner", config={"model": str(archive("ner_elmo")), **config})
    assert _one_line(error) == message


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is there")
def test_a_gpu_that_is_not_there(archive):
    with pytest.raises(ElmoPipeError) as error:
        spacy.blank("en").add_pipe("elmo_ner", config={"model": str(archive("ner_elmo")), "cuda_device": 0})
    assert (
        _one_line(error) == "elmo_ner: cuda_device 0: no GPU is available to torch here; use cuda_device -1 (the CPU)"
    )


def test_the_error_types_are_importable_without_torch_or_allennlp():
    module = importlib.import_module("elmo_tasks.spacy_pipes.errors")
    assert issubclass(module.DocTooLong, module.ElmoPipeError) and issubclass(module.ElmoPipeError, ValueError)
