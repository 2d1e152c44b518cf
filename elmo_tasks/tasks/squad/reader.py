"""Reads SQuAD v1.1 json (the official files, or XQuAD's English file) into QA instances.

Each question becomes one instance: ``question`` and ``passage`` TextFields (spaCy's blank
English tokenizer, which keeps every token's character offsets), the gold ``span_start`` /
``span_end`` token indices when the question has answers, and ``metadata`` with the question
id, the passage text, the token offsets and every gold answer text (for the official metric).

Gold spans. An answer is given as a character span; it becomes the tokens it overlaps. When
the answer does not start and end on token boundaries (e.g. "1990" inside "1990s") the
smallest covering token span is used; such answers are counted and logged per file. With
several gold answers (the official dev file has three or more per question) the span most
answers agree on is the training target (ties: the first one); all texts are kept for scoring.

Passage cap. ``passage_length_limit`` truncates passages for training only: configs set it
on ``dataset_reader`` and leave it out of ``validation_dataset_reader``, which ``allennlp
evaluate``, ``predict`` and ``squad-predict`` use, so evaluation always sees whole passages and
every question. A training question whose answer lies beyond the cap is skipped (counted and
logged).

Article-level folds: a path may end in ``#fold=K/N`` or ``#folds-except=K/N``
(:mod:`elmo_tasks.tasks.squad.articles`).
"""

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Instance, Token, TokenIndexer, Tokenizer
from allennlp.data.fields import IndexField, MetadataField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer

from elmo_tasks.counted_nouns import counted
from elmo_tasks.setting_checks import positive_setting
from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.squad.articles import load_articles
from elmo_tasks.tasks.squad.names import READER
from elmo_tasks.tokenization import SpacyBlankTokenizer

logger = logging.getLogger(__name__)


#: The name of SQuAD data errors before every data file had one error class (kept for code that catches it).
#: Its messages name the file and the question id (the official files are one line of json).
SquadFormatError = DataFileError


@dataclass
class SquadQuestion:
    question_id: str
    question: str
    passage: str
    answer_starts: List[int]  # character offsets, one per gold answer
    answer_texts: List[str]


def iter_questions(articles: Sequence[Dict[str, Any]], where: str) -> Iterable[SquadQuestion]:
    """Every question of the articles, checked; errors name ``where`` and the question id."""
    for article_number, article in enumerate(articles):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise DataFileError(f"{where}: article {article_number} has no 'paragraphs' list")
        for paragraph in paragraphs:
            passage = paragraph.get("context")
            qas = paragraph.get("qas")
            if not isinstance(passage, str) or not isinstance(qas, list):
                raise DataFileError(
                    f"{where}: a paragraph of article {article.get('title', article_number)!r} "
                    "needs a 'context' string and a 'qas' list"
                )
            for qa in qas:
                yield _checked_question(qa, passage, where)


def _checked_question(qa: Any, passage: str, where: str) -> SquadQuestion:
    question_id = qa.get("id") if isinstance(qa, dict) else None
    if not isinstance(question_id, str):
        raise DataFileError(f"{where}: a question has no string 'id': {str(qa)[:200]}")
    here = f"{where}, question id {question_id}"
    question = qa.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataFileError(f"{here}: 'question' must be a non-empty string")
    answers = qa.get("answers", [])
    if not isinstance(answers, list):
        raise DataFileError(f'{here}: \'answers\' must be a list of {{"text", "answer_start"}}')
    starts, texts = [], []
    for answer in answers:
        text = answer.get("text") if isinstance(answer, dict) else None
        start = answer.get("answer_start") if isinstance(answer, dict) else None
        if not isinstance(text, str) or not isinstance(start, int) or isinstance(start, bool):
            raise DataFileError(
                f"{here}: each answer needs 'text' (string) and 'answer_start' (integer); got {answer!r}"
            )
        if not text.strip() or start < 0 or passage[start : start + len(text)] != text:
            raise DataFileError(
                f"{here}: answer {text!r} is not at character {start} of the passage (found "
                f"{passage[max(start, 0) : max(start, 0) + len(text)]!r}); 'answer_start' must index the "
                "answer text in 'context'"
            )
        starts.append(start)
        texts.append(text)
    return SquadQuestion(question_id, question, passage, starts, texts)


def char_span_to_token_span(tokens: Sequence[Token], start: int, end: int) -> Tuple[Tuple[int, int], bool]:
    """Inclusive token span covering characters ``[start, end)``, and whether it is exact
    (the answer starts at the first token's start and ends at the last token's end)."""
    first = next((i for i, token in enumerate(tokens) if _character_offsets(token)[1] > start), None)
    last = next((i for i in range(len(tokens) - 1, -1, -1) if _character_offsets(tokens[i])[0] < end), None)
    if first is None or last is None or last < first:
        raise ValueError(f"no token overlaps characters {start}-{end}")
    exact = _character_offsets(tokens[first])[0] == start and _character_offsets(tokens[last])[1] == end
    return (first, last), exact


def _character_offsets(token: Token) -> Tuple[int, int]:
    """Where ``token`` starts and ends (exclusive) in the passage; answers are found by these offsets."""
    if token.idx is None or token.idx_end is None:
        raise ConfigurationError(
            f"{READER}: the tokenizer gave the token {token.text!r} no character offsets; use a tokenizer "
            "that keeps them, such as spacy_blank (the default)"
        )
    return token.idx, token.idx_end


@DatasetReader.register("squad_v1")
class SquadV1Reader(DatasetReader):
    """SQuAD v1.1 json -> ``question``, ``passage``, ``span_start``, ``span_end``, ``metadata``.

    # Parameters
    tokenizer : defaults to ``spacy_blank`` (tokens keep character offsets).
    token_indexers : used for question and passage; default ``{"tokens": single_id}``.
    passage_length_limit : truncate passages to this many tokens (training only, see above).
    """

    def __init__(
        self,
        tokenizer: Optional[Tokenizer] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        passage_length_limit: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        positive_setting(passage_length_limit, "passage_length_limit", READER, optional=True)
        self.tokenizer = tokenizer or SpacyBlankTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.passage_length_limit = passage_length_limit
        self._passage_tokens_cache: Dict[str, List[Token]] = {}

    def _read(self, file_path: str) -> Iterable[Instance]:
        articles = load_articles(file_path)
        counts: Counter = Counter()
        for question in iter_questions(articles, str(file_path)):
            counts["questions"] += 1
            passage_tokens = self._tokenize_passage(question.passage)
            try:
                instance = self.text_to_instance(
                    question.question,
                    question.passage,
                    question.question_id,
                    question.answer_starts,
                    question.answer_texts,
                    passage_tokens,
                    counts,
                )
            except ValueError as error:
                raise DataFileError(f"{file_path}, question id {question.question_id}: {error}") from None
            if instance is None:
                continue
            counts["instances"] += 1
            yield instance
        self._passage_tokens_cache.clear()
        logger.info(
            "SQuAD %s: %s -> %s; %s not on token boundaries "
            "(closest covering span used); %s skipped because the answer lies beyond "
            "passage_length_limit=%s",
            file_path,
            counted(counts["questions"], "question"),
            counted(counts["instances"], "instance"),
            counted(counts["misaligned_answers"], "gold answer"),
            counted(counts["beyond_limit"], "question"),
            self.passage_length_limit,
        )

    def _tokenize_passage(self, passage: str) -> List[Token]:
        """Questions of one paragraph come together: tokenize each passage once."""
        if passage not in self._passage_tokens_cache:
            self._passage_tokens_cache.clear()
            self._passage_tokens_cache[passage] = self.tokenizer.tokenize(passage)
        return self._passage_tokens_cache[passage]

    def text_to_instance(  # type: ignore[override]  # why: None for a training question whose answer is cut off
        self,
        question: str,
        passage: str,
        question_id: Optional[str] = None,
        answer_starts: Optional[List[int]] = None,
        answer_texts: Optional[List[str]] = None,
        passage_tokens: Optional[List[Token]] = None,
        counts: Optional[Counter] = None,
    ) -> Optional[Instance]:
        """One question; ``None`` when, in training with a cap, its answer lies beyond the cap."""
        counts = counts if counts is not None else Counter()
        passage_tokens = passage_tokens if passage_tokens is not None else self.tokenizer.tokenize(passage)
        question_tokens = self.tokenizer.tokenize(question)
        if not passage_tokens:
            raise ValueError("the passage has no tokens")
        if not question_tokens:
            raise ValueError("the question has no tokens")
        answer_starts, answer_texts = answer_starts or [], answer_texts or []
        spans = []
        for start, text in zip(answer_starts, answer_texts, strict=False):
            span, exact = char_span_to_token_span(passage_tokens, start, start + len(text))
            counts["misaligned_answers"] += not exact
            spans.append(span)
        if self.passage_length_limit is not None and len(passage_tokens) > self.passage_length_limit:
            passage_tokens = passage_tokens[: self.passage_length_limit]
            spans = [span for span in spans if span[1] < self.passage_length_limit]
            if answer_texts and not spans:
                counts["beyond_limit"] += 1
                return None
        passage_field = TextField(passage_tokens, self.token_indexers)
        fields: Dict[str, Any] = {
            "question": TextField(question_tokens, self.token_indexers),
            "passage": passage_field,
        }
        if spans:
            target = Counter(spans).most_common(1)[0][0]  # ties: the first answer's span
            fields["span_start"] = IndexField(target[0], passage_field)
            fields["span_end"] = IndexField(target[1], passage_field)
        fields["metadata"] = MetadataField(
            {
                "question_id": question_id,
                "question_tokens": [t.text for t in question_tokens],
                "passage_tokens": [t.text for t in passage_tokens],
                "passage_text": passage,
                "token_offsets": [(t.idx, t.idx_end) for t in passage_tokens],
                "answer_texts": list(answer_texts),
            }
        )
        return Instance(fields)
