"""``POST /api/bilm/neighbours``: the request checked key by key, then answered by :mod:`bilm_neighbours`.

Request: ``{"sentence": "raw text", "word": 4 or "play", "top": 5, "same_word": true}``; only
``sentence`` is required. Without ``word`` the answer has just the sentence's ``words`` (the page
shows them as buttons to pick from); ``word`` is a token index or the word itself (its first
occurrence, case-insensitive). Each bad key is answered 422 with a message naming it; a sentence
over ``MAX_QUERY_TOKENS`` tokens 413.
"""

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

from elmo_tasks.demo.bilm_neighbours import MAX_QUERY_TOKENS, MAX_TOP, BilmNeighbours
from elmo_tasks.demo.request_json import ApiError

EXAMPLE = json.dumps({"sentence": "He made a fine play at second base .", "word": "play", "top": 5, "same_word": True})


def _bad(message: str) -> ApiError:
    return ApiError(422, f"{message}; expected a JSON object like {EXAMPLE}")


def _word_index(word: Any, words: List[str]) -> Optional[int]:
    """The token index ``word`` names (an index, or a word of the sentence), None when not given."""
    if word is None:
        return None
    if isinstance(word, str):
        lowered = [w.lower() for w in words]
        if word.lower() not in lowered:
            raise _bad(f'"word" is {word!r}, which is not one of the sentence\'s words {words[:50]}')
        return lowered.index(word.lower())
    if type(word) is not int or not 0 <= word < len(words):
        raise _bad(f'"word" is {word!r:.50}; expected a token index between 0 and {len(words) - 1}, or a word')
    return word


def _options(record: Dict[str, Any]) -> Tuple[int, bool]:
    """``top`` and ``same_word``, checked (both optional)."""
    top, same_word = record.get("top", 5), record.get("same_word", True)
    if type(top) is not int or not 1 <= top <= MAX_TOP:
        raise _bad(f'"top" is {top!r:.50}; expected an integer from 1 to {MAX_TOP}')
    if not isinstance(same_word, bool):
        raise _bad(f'"same_word" is {same_word!r:.50}; expected true or false')
    return top, same_word


def answer_query(neighbours: BilmNeighbours, tokenize: Callable[[str], List[str]], record: Any) -> Dict[str, Any]:
    """The answer to one request body (parsed JSON); ApiError naming the key for a bad one."""
    if not isinstance(record, dict):
        raise _bad("the body is JSON but not an object")
    sentence = record.get("sentence")
    if not isinstance(sentence, str) or not sentence.strip():
        raise _bad('no "sentence"' if sentence is None else '"sentence" must be a non-empty string')
    words = tokenize(sentence)
    if len(words) > MAX_QUERY_TOKENS:
        raise ApiError(
            413,
            f'"sentence" has {len(words):,} tokens, more than the biLM page\'s limit of {MAX_QUERY_TOKENS}; '
            "give one sentence",
        )
    index = _word_index(record.get("word"), words)
    top, same_word = _options(record)
    if index is None:
        return {"words": words, "index": None, "word": None, "layers": [], "note": None}
    return neighbours.neighbours(words, index, top, same_word)
