"""The components as spaCy users meet them: found by name with no import of ours, saved with
``nlp.to_disk`` and loaded with ``spacy.load`` (the archive loaded again from the reference kept in the
config), run in worker processes by ``nlp.pipe(n_process=2)``, pickled."""

import importlib.metadata
import json
import pickle
import subprocess
import sys

import numpy
import pytest
import spacy
from spacy.tokens import Doc

from tests.conftest import OPTIONS_FILE, ROOT, WEIGHT_FILE
from tests.spacy_pipes.conftest import FACTORIES, TASKS, TEXTS


def test_the_factories_are_entry_points():
    found = {point.name: point.value for point in importlib.metadata.entry_points(group="spacy_factories")}
    assert {name: found.get(name) for name in FACTORIES} == FACTORIES


# A user's program: spaCy alone finds the component; building a pipeline imports no AllenNLP, nor does
# the ELMo component on a biLM's files.
USERS_PROGRAM = """
import json, sys
import spacy
nlp = spacy.blank("en")
after_blank = "allennlp" in sys.modules
nlp.add_pipe("elmo", config={"options_file": sys.argv[1], "weight_file": sys.argv[2]})
doc = nlp("The cat sat.")
print(json.dumps({"after_blank": after_blank, "after_elmo": "allennlp" in sys.modules, "shape": doc.tensor.shape}))
"""


def test_spacy_finds_the_components_with_no_import_of_ours(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", USERS_PROGRAM, OPTIONS_FILE, WEIGHT_FILE],
        cwd=tmp_path,  # not the checkout: the installed package's entry points
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"after_blank": False, "after_elmo": False, "shape": [4, 32]}


def _annotations(doc: Doc) -> dict:
    """What the components set, the numbers apart (their last bits depend on the batch)."""
    return {
        "ents": [(ent.start, ent.end, ent.label_) for ent in doc.ents],
        "spans": {key: [(span.start, span.end, span.label_) for span in group] for key, group in doc.spans.items()},
        "srl": doc._.elmo_srl,
        "coref": doc._.elmo_coref,
        "cats": list(doc.cats),
        "layers": doc._.elmo_layers.shape,
    }


def assert_same(doc: Doc, expected: Doc) -> None:
    assert _annotations(doc) == _annotations(expected)
    assert doc.cats == pytest.approx(expected.cats, abs=1e-6)
    numpy.testing.assert_allclose(doc.tensor, expected.tensor, atol=1e-5)
    numpy.testing.assert_allclose(doc._.elmo_layers, expected._.elmo_layers, atol=1e-5)


@pytest.fixture(scope="module")
def full_pipeline(archive):
    """``spacy.blank("en")`` with a sentencizer and every component."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("elmo", config={"options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE})
    for component, (experiment, _) in TASKS.items():
        nlp.add_pipe(component, config={"model": str(archive(experiment))})
    return nlp


def test_a_saved_pipeline_loads_with_its_models(full_pipeline, tmp_path):
    full_pipeline.to_disk(tmp_path / "pipeline")
    config = (tmp_path / "pipeline" / "config.cfg").read_text(encoding="utf-8")
    assert 'factory = "elmo_ner"' in config and "model.tar.gz" in config  # the reference, not the model
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == full_pipeline.pipe_names == ["sentencizer", "elmo", *TASKS]
    for text in TEXTS:
        assert_same(loaded(text), full_pipeline(text))


def test_two_worker_processes_give_what_one_process_gives(full_pipeline):
    texts = TEXTS * 2
    expected = list(full_pipeline.pipe(texts, batch_size=2))
    docs = list(full_pipeline.pipe(texts, batch_size=2, n_process=2))
    assert [doc.text for doc in docs] == texts
    for doc, one_process in zip(docs, expected, strict=True):
        assert_same(doc, one_process)


def test_a_pickled_component_is_built_again_from_its_settings(archive):
    nlp = spacy.blank("en")
    component = nlp.add_pipe("elmo_ner", config={"model": str(archive("ner_elmo")), "max_sentence_tokens": 500})
    copy = pickle.loads(pickle.dumps(component))
    assert type(copy) is type(component) and copy.settings == component.settings and copy.max_sentence_tokens == 500
    for text in TEXTS:
        assert [(e.start, e.end, e.label_) for e in copy(nlp.make_doc(text)).ents] == [
            (e.start, e.end, e.label_) for e in nlp(text).ents
        ]


def test_docs_keep_the_annotations_through_bytes(full_pipeline):
    """``Doc.to_bytes`` (``DocBin``, and how ``nlp.pipe(n_process=...)`` sends Docs back) keeps them."""
    doc = full_pipeline(TEXTS[0])
    copy = Doc(full_pipeline.vocab).from_bytes(doc.to_bytes())
    assert _annotations(copy) == _annotations(doc) and copy.cats == doc.cats
    assert numpy.array_equal(copy.tensor, doc.tensor) and numpy.array_equal(copy._.elmo_layers, doc._.elmo_layers)


def test_make_setup_installs_the_entry_points():
    """``make setup`` (scripts/setup.sh) installs the package as the entry points need: editable, from setup.cfg."""
    setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    assert "pip_install --no-deps --no-build-isolation -e ." in setup
    assert "spacy_factories =" in (ROOT / "setup.cfg").read_text(encoding="utf-8")


def test_a_shipped_models_name(archive, tmp_path, monkeypatch):
    """``elmo_tasks:pretrained/<name>`` (elmo_tasks/pretrained/catalogue.py), here from a catalogue of one."""
    import shutil

    from elmo_tasks.pretrained.catalogue import ROOT_VARIABLE
    from elmo_tasks.spacy_pipes import ElmoPipeError

    (tmp_path / "ner").mkdir()
    shutil.copy(archive("ner_elmo"), tmp_path / "ner" / "model.tar.gz")
    (tmp_path / "ner" / "shipped.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv(ROOT_VARIABLE, str(tmp_path))
    shipped, by_path = spacy.blank("en"), spacy.blank("en")
    shipped.add_pipe("elmo_ner", config={"model": "elmo_tasks:pretrained/ner"})
    by_path.add_pipe("elmo_ner", config={"model": str(archive("ner_elmo"))})
    assert [(e.start, e.end, e.label_) for e in shipped(TEXTS[0]).ents] == [
        (e.start, e.end, e.label_) for e in by_path(TEXTS[0]).ents
    ]
    with pytest.raises(ElmoPipeError, match=r"^elmo_srl: elmo_tasks:pretrained/ner holds a NER model \(`ner_model`\)"):
        spacy.blank("en").add_pipe("elmo_srl", config={"model": "elmo_tasks:pretrained/ner"})
    with pytest.raises(ElmoPipeError, match=r"^elmo_sst: elmo_tasks:pretrained/sst5 names no shipped task model; "):
        spacy.blank("en").add_pipe("elmo_sst", config={"model": "elmo_tasks:pretrained/sst5"})
