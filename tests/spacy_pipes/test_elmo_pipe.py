"""``elmo``: the biLM's layers on every token, and the chosen mix in ``doc.tensor`` / ``token.vector``,
equal to what the biLM (or the task model's ELMo embedder) computes on the same words."""

from typing import List

import numpy
import pytest
import spacy
import torch

from elmo_tasks.bilm import batch_to_ids, load_bilm
from elmo_tasks.modules.elmo_token_embedder import find_elmo_embedder
from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE
from elmo_tasks.spacy_pipes import ElmoPipeError
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE, untrained_archive
from tests.spacy_pipes.conftest import TEXTS

TINY = {"options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE}


def _layers(bilm, words: List[str]) -> numpy.ndarray:
    """The biLM's layers of one sentence on its own, ``(layers, words, dim)``."""
    with torch.no_grad():
        return torch.stack(bilm(batch_to_ids([words])).layers)[:, 0].numpy()


@pytest.fixture(scope="module")
def tiny_bilm():
    return load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()


@pytest.fixture(scope="module")
def learned_archive(tmp_path_factory):
    """An untrained NER model whose ELMo mix has weights of its own (an untrained one's are an average)."""
    from allennlp.models.archival import archive_model

    folder = tmp_path_factory.mktemp("ner_learned")
    untrained_archive("ner_elmo", folder)
    state = torch.load(folder / "best.th")
    mixing = sorted(key for key in state if ".scalar_mix_0.scalar_parameters." in key)
    assert len(mixing) == 3
    for key, value in zip(mixing, [1.5, -1.0, 0.25], strict=True):
        state[key] = torch.tensor([value])
    [gamma] = [key for key in state if key.endswith(".scalar_mix_0.gamma")]
    state[gamma] = torch.tensor([2.0])
    torch.save(state, folder / "best.th")
    archive_model(folder)
    return folder / "model.tar.gz"


def test_the_default_is_the_shipped_small_bilm_averaged():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    doc = nlp(TEXTS[1])
    expected = _layers(load_bilm(SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE).eval(), [t.text for t in doc])
    numpy.testing.assert_allclose(doc._.elmo_layers, expected, atol=1e-5)
    numpy.testing.assert_allclose(doc.tensor, expected.mean(axis=0), atol=1e-5)
    assert doc._.elmo_layers.shape == (3, len(doc), 256)


def test_the_top_layer_of_any_bilm_and_whitespace_tokens_zero(tiny_bilm):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={**TINY, "mix": "top"})
    doc = nlp(TEXTS[2])  # a double space and a blank line: whitespace tokens
    spaces = [token.i for token in doc if token.is_space]
    words = [token for token in doc if not token.is_space]
    assert spaces
    expected = _layers(tiny_bilm, [token.text for token in words])
    numpy.testing.assert_allclose(doc._.elmo_layers[:, [t.i for t in words]], expected, atol=1e-5)
    numpy.testing.assert_allclose(doc.tensor[[t.i for t in words]], expected[-1], atol=1e-5)
    assert not doc.tensor[spaces].any() and not doc._.elmo_layers[:, spaces].any()
    token = words[1]
    assert numpy.array_equal(token.vector, doc.tensor[token.i])  # spaCy reads doc.tensor: no static vectors
    assert numpy.array_equal(token._.elmo_layers, doc._.elmo_layers[:, token.i])
    assert numpy.allclose(doc.vector, doc.tensor.mean(axis=0))


def test_each_sentence_the_pipeline_found_is_read_on_its_own(tiny_bilm):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("elmo", config=TINY)
    doc = nlp(TEXTS[0])
    sentences = list(doc.sents)
    assert len(sentences) == 2
    for sentence in sentences:
        expected = _layers(tiny_bilm, [token.text for token in sentence])
        numpy.testing.assert_allclose(doc._.elmo_layers[:, sentence.start : sentence.end], expected, atol=1e-5)
    whole = _layers(tiny_bilm, [token.text for token in doc])  # the whole Doc at once differs after the first
    assert not numpy.allclose(doc._.elmo_layers[-1, sentences[1].start :], whole[-1, sentences[1].start :], atol=1e-3)


def test_batches_give_each_doc_what_it_gets_alone():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=TINY)
    texts = TEXTS * 2
    for batched, text in zip(nlp.pipe(texts, batch_size=3), texts, strict=True):
        numpy.testing.assert_allclose(batched._.elmo_layers, nlp(text)._.elmo_layers, atol=1e-5)


def test_the_learned_mix_of_a_task_archive_is_its_embedders(learned_archive):
    from allennlp.models.archival import load_archive

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": str(learned_archive), "mix": "learned"})
    doc = nlp(TEXTS[1])
    embedder = find_elmo_embedder(load_archive(str(learned_archive)).model).eval()
    with torch.no_grad():
        ids = batch_to_ids([[token.text for token in doc]])
        expected = embedder.representations(ids)[0][0].numpy()
        layers = torch.stack(embedder.bilm(ids).layers)[:, 0].numpy()
    numpy.testing.assert_allclose(doc.tensor, expected, atol=1e-5)
    numpy.testing.assert_allclose(doc._.elmo_layers, layers, atol=1e-5)
    assert not numpy.allclose(doc.tensor, layers.mean(axis=0), atol=1e-4)  # the learned weights are not an average


def test_static_vectors_give_way_to_elmo():
    nlp = spacy.blank("en")
    nlp.vocab.set_vector("cat", numpy.ones(4, dtype=numpy.float32))  # a vocabulary with static vectors
    nlp.add_pipe("elmo", config=TINY)
    doc = nlp("The cat sat.")
    assert numpy.array_equal(doc[1].vector, doc.tensor[1]) and doc[0].has_vector
    assert numpy.allclose(doc[0:2].vector, doc.tensor[0:2].mean(axis=0))
    assert numpy.allclose(doc.vector, doc.tensor.mean(axis=0))
    assert doc[1].similarity(doc[2]) == pytest.approx(
        float(
            numpy.dot(doc.tensor[1], doc.tensor[2])
            / numpy.linalg.norm(doc.tensor[1])
            / numpy.linalg.norm(doc.tensor[2])
        ),
        abs=1e-5,
    )


def test_layers_can_be_left_out():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={**TINY, "store_layers": False})
    doc = nlp("The cat sat.")
    assert doc._.elmo_layers is None and doc[0]._.elmo_layers is None and doc.tensor.shape == (4, 32)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"mix": "sum"}, "elmo: mix must be one of average, top, learned; got 'sum'"),
        ({"mix": "learned"}, 'elmo: mix "learned" takes the mixing weights of a task model: name its archive as model'),
        ({"options_file": OPTIONS_FILE}, "elmo: give both options_file and weight_file, or neither"),
        ({**TINY, "model": "model.tar.gz"}, "elmo: give model .* or options_file and weight_file, not both"),
        ({"options_file": "no/options.json", "weight_file": WEIGHT_FILE}, "elmo: .*no/options.json"),
        ({**TINY, "max_sentence_tokens": 0}, "elmo: max_sentence_tokens must be a positive whole number, got 0"),
    ],
)
def test_bad_settings_are_one_line(config, message):
    with pytest.raises(ElmoPipeError, match=message) as error:
        spacy.blank("en").add_pipe("elmo", config=config)
    assert "\n" not in str(error.value)


def test_an_archive_without_elmo_or_without_that_mix_is_one_line(archive):
    with pytest.raises(ElmoPipeError, match=r"elmo: .* holds a `ner_model` model without ELMo") as error:
        spacy.blank("en").add_pipe("elmo", config={"model": str(archive("ner_baseline"))})
    assert "\n" not in str(error.value)
    config = {"model": str(archive("ner_elmo")), "mix": "learned", "scalar_mix": 1}
    with pytest.raises(ElmoPipeError, match="elmo: scalar_mix must name one of the model's ELMo mixes, 0 to 0; got 1"):
        spacy.blank("en").add_pipe("elmo", config=config)
