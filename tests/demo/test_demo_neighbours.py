"""The biLM page's nearest neighbours in context, on bilm-tf's tiny test biLM and the bundled corpus."""

import pytest
import torch

from elmo_tasks.demo.bilm_neighbours import CORPUS_FILE, MAX_QUERY_TOKENS, read_corpus
from elmo_tasks.demo.bilm_query import answer_query
from elmo_tasks.demo.request_json import ApiError


def _split(text: str):
    return text.split()


def test_the_bundled_corpus_has_several_senses_of_play_and_bank():
    sentences = read_corpus(CORPUS_FILE)
    assert 40 <= len(sentences) <= 80
    assert sum("play" in s for s in sentences) >= 10 and sum("bank" in s for s in sentences) >= 6


def test_neighbours_are_ranked_by_cosine_similarity_per_layer(neighbours):
    words = ["The", "goalkeeper", "made", "a", "fine", "play", "."]
    answer = neighbours.neighbours(words, 5, top=4)
    assert answer["word"] == "play" and [layer["layer"] for layer in answer["layers"]] == [0, 1, 2]
    query = neighbours._embed([words])[0][:, 5]
    for layer in answer["layers"]:
        found = layer["neighbours"]
        assert len(found) == 4 and all(n["sentence"][n["index"]] == "play" for n in found)
        similarities = [n["similarity"] for n in found]
        assert similarities == sorted(similarities, reverse=True)
        first = found[0]
        corpus_vector = neighbours._embed([first["sentence"]])[0][layer["layer"], first["index"]]
        expected = torch.nn.functional.cosine_similarity(query[layer["layer"]], corpus_vector, dim=0)
        assert first["similarity"] == pytest.approx(float(expected), abs=1e-4)
    # layer 0 has no context: every "play" of the corpus has the query's vector
    assert all(n["similarity"] == pytest.approx(1.0) for n in answer["layers"][0]["neighbours"])


def test_a_corpus_sentence_is_not_its_own_neighbour_and_unknown_words_fall_back(neighbours):
    sentence = read_corpus(CORPUS_FILE)[0]
    answer = neighbours.neighbours(sentence, sentence.index("play"), top=20)
    assert all(n["sentence"] != sentence for layer in answer["layers"] for n in layer["neighbours"])
    unknown = neighbours.neighbours(["A", "zyzzyva", "crawled", "."], 1, top=3)
    assert "not in the demo corpus" in unknown["note"]
    assert len(unknown["layers"][2]["neighbours"]) == 3
    anything = neighbours.neighbours(["A", "zyzzyva", "crawled", "."], 1, top=3, same_word=False)
    assert anything["note"] is None


def test_queries_are_checked_key_by_key(neighbours):
    assert answer_query(neighbours, _split, {"sentence": "a b"}) == {
        "words": ["a", "b"],
        "index": None,
        "word": None,
        "layers": [],
        "note": None,
    }
    assert answer_query(neighbours, _split, {"sentence": "a Play b", "word": "play", "top": 1})["index"] == 1
    bad = [
        ([1], 422, "not an object"),
        ({}, 422, 'no "sentence"'),
        ({"sentence": " "}, 422, '"sentence" must be a non-empty string'),
        ({"sentence": "a b", "word": 2}, 422, '"word" is 2; expected a token index between 0 and 1'),
        ({"sentence": "a b", "word": "c"}, 422, "\"word\" is 'c', which is not one of"),
        ({"sentence": "a b", "top": 0}, 422, '"top" is 0; expected an integer from 1 to 20'),
        ({"sentence": "a b", "same_word": "yes"}, 422, '"same_word"'),
        ({"sentence": "a " * (MAX_QUERY_TOKENS + 1)}, 413, f"more than the biLM page's limit of {MAX_QUERY_TOKENS}"),
    ]
    for record, status, message in bad:
        with pytest.raises(ApiError) as error:
            answer_query(neighbours, _split, record)
        assert error.value.status == status and message in error.value.message, (record, error.value.message)
