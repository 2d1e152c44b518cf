"""Each task component's output equals its task predictor's on the same words: on ``spacy.blank("en")``
(the predictors' own tokenizer, so the same text gives the same words), one Doc at a time and through
``nlp.pipe`` in batches, and on a pipeline that already set sentence boundaries (then per sentence,
or for coreference per document of those sentences)."""

from typing import Any, Dict, List, Tuple

import pytest
from allennlp.data.dataset_readers.dataset_utils.span_utils import bio_tags_to_spans
from spacy.tokens import Doc, Token

from tests.spacy_pipes.conftest import TEXTS


def _words(doc: Doc) -> List[Token]:
    """The tokens the predictors see: whitespace tokens left out."""
    return [token for token in doc if not token.is_space]


def _entities(doc: Doc) -> List[Tuple[int, int, str]]:
    return [(ent.start_char, ent.end_char, ent.label_) for ent in doc.ents]


def _predicted_entities(output: Dict[str, Any], offset: int = 0) -> List[Tuple[int, int, str]]:
    return [(e["char_start"] + offset, e["char_end"] + offset, e["type"]) for e in output["entities"]]


def test_ner_sets_the_predictors_entities(blank_with, predictor):
    nlp, ner = blank_with("elmo_ner"), predictor("elmo_ner")
    found = 0
    for text in TEXTS:
        doc = nlp(text)
        expected = _predicted_entities(ner.predict(text))
        assert _entities(doc) == expected
        assert all(token.ent_iob_ in "BIO" for token in doc)  # every token annotated: in an entity or outside
        found += len(expected)
    assert found > 0  # the untrained model finds some, so the comparison compares something


def test_ner_in_batches_equals_one_doc_at_a_time(blank_with):
    nlp = blank_with("elmo_ner")
    texts = TEXTS * 3
    assert [_entities(doc) for doc in nlp.pipe(texts, batch_size=5)] == [_entities(nlp(text)) for text in texts]


def test_ner_on_sentences_the_pipeline_found(blank_with, predictor):
    nlp, ner = blank_with("elmo_ner", sentencizer=True), predictor("elmo_ner")
    doc = nlp(TEXTS[0])
    sentences = list(doc.sents)
    assert len(sentences) == 2
    expected = [e for s in sentences for e in _predicted_entities(ner.predict(s.text), s.start_char)]
    assert _entities(doc) == expected


def _srl_frames(output: Dict[str, Any], tokens: List[Token]) -> List[Dict[str, Any]]:
    """The predictor's frames as ``elmo_srl`` writes them, in Doc token indices."""
    assert [token.text for token in tokens] == output["words"]
    frames = []
    for frame in output["verbs"]:
        roles = sorted(bio_tags_to_spans(frame["tags"]), key=lambda role: role[1])
        frames.append(
            {
                "predicate": tokens[frame["index"]].i,
                "verb": frame["verb"],
                "arguments": [[label, tokens[start].i, tokens[end].i + 1] for label, (start, end) in roles],
                "description": frame["description"],
            }
        )
    return frames


def _srl_groups(doc: Doc) -> List[List[Tuple[str, int, int]]]:
    groups = []
    while f"srl_{len(groups)}" in doc.spans:
        groups.append([(span.label_, span.start, span.end) for span in doc.spans[f"srl_{len(groups)}"]])
    return groups


def test_srl_sets_the_predictors_frames(blank_with, predictor):
    nlp, srl = blank_with("elmo_srl"), predictor("elmo_srl")
    for text in TEXTS:
        doc = nlp(text)
        expected = _srl_frames(srl.predict(text), _words(doc))
        assert doc._.elmo_srl == expected
        assert _srl_groups(doc) == [[tuple(argument) for argument in frame["arguments"]] for frame in expected]
        for number, frame in enumerate(expected):
            assert doc.spans[f"srl_{number}"].attrs == {"predicate": frame["predicate"], "verb": frame["verb"]}
    assert any(frame["arguments"] for frame in nlp(TEXTS[0])._.elmo_srl)


def test_srl_on_sentences_the_pipeline_found(blank_with, predictor):
    nlp, srl = blank_with("elmo_srl", sentencizer=True), predictor("elmo_srl")
    doc = nlp(TEXTS[0])
    expected = []
    for sentence in doc.sents:  # each sentence's frames, in its own token indices, moved to the Doc's
        for frame in _srl_frames(srl.predict(sentence.text), _words(sentence.as_doc())):
            frame["predicate"] += sentence.start
            frame["arguments"] = [
                [label, start + sentence.start, end + sentence.start] for label, start, end in frame["arguments"]
            ]
            expected.append(frame)
    assert len(list(doc.sents)) == 2 and doc._.elmo_srl == expected


def _coref_clusters(output: Dict[str, Any], tokens: List[Token]) -> List[List[List[int]]]:
    assert [token.text for token in tokens] == output["document"]
    return [[[tokens[start].i, tokens[end].i + 1] for start, end in cluster] for cluster in output["clusters"]]


def test_coref_sets_the_predictors_clusters(blank_with, predictor):
    nlp, coref = blank_with("elmo_coref"), predictor("elmo_coref")
    for text in TEXTS:
        doc = nlp(text)
        expected = _coref_clusters(coref.predict_json({"document": text}), _words(doc))
        assert doc._.elmo_coref == expected
        for number, cluster in enumerate(expected):
            assert [[span.start, span.end] for span in doc.spans[f"coref_{number}"]] == cluster
            assert {span.label_ for span in doc.spans[f"coref_{number}"]} == {str(number)}
        assert sorted([span.start, span.end] for span in doc.spans["coref"]) == sorted(m for c in expected for m in c)
    assert nlp(TEXTS[0])._.elmo_coref


def test_coref_reads_the_sentences_the_pipeline_set(blank_with, predictor):
    """Boundaries the predictor's own splitting would not make (after ``and``): the model is given them."""
    nlp, coref = blank_with("elmo_coref"), predictor("elmo_coref")
    doc = nlp.make_doc(TEXTS[0])
    for token in doc:
        token.is_sent_start = token.i == 0 or doc[token.i - 1].text in {".", "and"}
    doc = nlp(doc)
    sentences = [[token.text for token in sentence] for sentence in doc.sents]
    assert len(sentences) == 3
    reader = coref._dataset_reader
    [output] = coref.predict_batch_instance([reader.text_to_instance(sentences, genre="nw", name="doc")])
    assert doc._.elmo_coref == _coref_clusters(output, _words(doc))


def test_sst_sets_the_predictors_class_probabilities(blank_with, predictor):
    nlp, sst = blank_with("elmo_sst"), predictor("elmo_sst")
    docs = list(nlp.pipe(TEXTS, batch_size=3))
    for text, doc in zip(TEXTS, docs, strict=True):
        expected = sst.predict(text)["label_probs"]
        # in batches or one at a time (the biLM layers may come from fast_elmo's cache of another batch)
        for cats in (doc.cats, nlp(text).cats):
            assert list(cats) == list(expected) and cats == pytest.approx(expected, abs=1e-6)


def test_an_empty_doc_gets_nothing(blank_with):
    for component in ("elmo_ner", "elmo_srl", "elmo_coref", "elmo_sst"):
        doc = blank_with(component)(" \n ")
        assert not doc.ents and not doc.cats and not doc._.elmo_srl and not doc._.elmo_coref


def test_ner_reads_the_pipelines_own_tokens_and_replaces_its_entities(blank_with, predictor):
    """A user's tokenization (here words given as they are) is what the model reads, and entities an earlier
    component set (an entity ruler) give way to the model's."""
    from allennlp.data.tokenizers import Token as AllenNlpToken

    nlp, ner = blank_with("elmo_ner"), predictor("elmo_ner")
    words = ["Marta-Velkin", "visited", "Port", "Elby", "on", "Monday."]  # not how spaCy would split them
    doc = Doc(nlp.vocab, words=words)
    doc.ents = [doc.char_span(0, 12, label="PERSON")]
    doc = nlp(doc)
    instance = ner._dataset_reader.text_to_instance([AllenNlpToken(word) for word in words])
    [output] = ner.predict_batch_instance([instance])
    assert [(e.start, e.end, e.label_) for e in doc.ents] == [
        (e["start"], e["end"] + 1, e["type"]) for e in output["entities"]
    ]
    assert "PERSON" not in {e.label_ for e in doc.ents}
