"""Raw text -> biLM training instances: character ids for the input, word ids as targets."""

import logging
import re
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Union

from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Instance, Token, TokenIndexer, Tokenizer
from allennlp.data.fields import TextField
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer

from elmo_tasks.bilm.characters import BOS_TOKEN, EOS_TOKEN
from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.lm.text_source import LineStats, decoded_lines, expand_data_path
from elmo_tasks.tokenization import blank_english_tokenizer
from elmo_tasks.wording import counted

logger = logging.getLogger(__name__)

#: The softmax vocabulary namespace the targets are indexed in.
LM_TARGET_NAMESPACE = "lm_targets"
_SENTENCE_END = re.compile(r"^[.!?]+$")
# A file without blank lines (e.g. one sentence per line) would be one huge "paragraph": cut it
# at a line end once it is this long, far below spaCy's max_length, so memory stays small.
_MAX_PARAGRAPH_CHARS = 20_000


@DatasetReader.register("bilm_raw_text")
class BilmRawTextReader(DatasetReader):
    """Reads plain text for biLM training.

    ``text_format``:
      * ``"sentence_per_line"``: every non-blank line is one sentence;
      * ``"running"``: consecutive non-blank lines form a paragraph (hard-wrapped news, books),
        split into sentences after ``.``, ``!`` or ``?`` tokens.
    Sentences longer than ``max_sentence_length`` tokens are cut into pieces (counted, logged).
    Invalid UTF-8 is an error naming the file and line, unless ``fallback_encoding`` is set
    (e.g. ``"cp1252"``): such lines are then decoded with it and counted in the log.

    Each instance has ``tokens`` (the ELMo character ids, no boundary tokens: the biLM adds
    them) and ``targets`` (the same words with ``<S>``/``</S>`` around them, indexed in the
    ``lm_targets`` namespace: the softmax vocabulary; rare words map to the unknown token).
    """

    def __init__(
        self,
        tokenizer: Optional[Tokenizer] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        text_format: str = "sentence_per_line",
        max_sentence_length: int = 100,
        drop_wikiextractor_markup: bool = False,
        unescape_html: bool = False,
        fallback_encoding: Optional[str] = None,
        target_namespace: str = LM_TARGET_NAMESPACE,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        if text_format not in ("sentence_per_line", "running"):
            raise ConfigurationError(f"text_format must be 'sentence_per_line' or 'running', got {text_format!r}")
        positive_count(max_sentence_length, "max_sentence_length", "the bilm_raw_text reader")
        self.tokenizer = tokenizer or blank_english_tokenizer()
        self.token_indexers = token_indexers or {"elmo": ELMoTokenCharactersIndexer()}
        self.text_format = text_format
        self.max_sentence_length = max_sentence_length
        self.drop_wikiextractor_markup = drop_wikiextractor_markup
        self.unescape_html = unescape_html
        if fallback_encoding is not None:
            try:
                "".encode(fallback_encoding)
            except LookupError:
                raise ConfigurationError(
                    f"fallback_encoding {fallback_encoding!r} is not a codec Python knows"
                ) from None
        self.fallback_encoding = fallback_encoding
        self.target_indexers: Dict[str, TokenIndexer] = {"lm": SingleIdTokenIndexer(namespace=target_namespace)}

    def _read(self, file_path: str) -> Iterable[Instance]:
        for sentence in self.shard_iterable(self.sentences(file_path)):
            yield self.text_to_instance(sentence)

    def sentences(self, file_path: str) -> Iterator[List[Token]]:
        """Every sentence of ``file_path`` as training reads it (cleaned, tokenized, cut), in
        file order and unsharded: what ``allennlp bilm-perplexity`` scores."""
        files = expand_data_path(file_path)
        stats = LineStats()
        counts = {"sentences": 0, "tokens": 0, "split": 0}
        yield from self._sentences(files, stats, counts)
        if counts["sentences"] == 0:
            raise DataFileError(f"{file_path}: no sentence could be read (the tokenizer produced no tokens)")
        stats.log(files)
        logger.info(
            "%s, %s; %d over max_sentence_length=%d cut into pieces",
            counted(counts["sentences"], "sentence"),
            counted(counts["tokens"], "token"),
            counts["split"],
            self.max_sentence_length,
        )

    def _sentences(self, files: List[str], stats: LineStats, counts: Dict[str, int]) -> Iterator[List[Token]]:
        for path in files:
            lines = decoded_lines(
                path, stats, self.drop_wikiextractor_markup, self.unescape_html, self.fallback_encoding
            )
            for text in self._units(lines):
                tokens = [t for t in self.tokenizer.tokenize(text) if t.ensure_text().strip()]
                pieces = _split_sentences(tokens) if self.text_format == "running" else [tokens]
                for sentence in pieces:
                    if not sentence:
                        continue
                    if len(sentence) > self.max_sentence_length:
                        counts["split"] += 1
                    for start in range(0, len(sentence), self.max_sentence_length):
                        chunk = sentence[start : start + self.max_sentence_length]
                        counts["sentences"] += 1
                        counts["tokens"] += len(chunk)
                        yield chunk

    def _units(self, lines: Iterable[str]) -> Iterator[str]:
        """Lines, or paragraphs (blank-line separated) for running text."""
        if self.text_format == "sentence_per_line":
            yield from (line for line in lines if line)
            return
        paragraph: List[str] = []
        size = 0
        for line in lines:
            if line:
                paragraph.append(line)
                size += len(line) + 1
            if paragraph and (not line or size >= _MAX_PARAGRAPH_CHARS):
                yield " ".join(paragraph)
                paragraph, size = [], 0
        if paragraph:
            yield " ".join(paragraph)

    def text_to_instance(self, tokens: Union[str, Sequence[Union[str, Token]]]) -> Instance:
        """``tokens``: a list of :class:`Token` or strings (a string is tokenized first)."""
        words = self.tokenizer.tokenize(tokens) if isinstance(tokens, str) else tokens
        word_tokens = [t if isinstance(t, Token) else Token(t) for t in words]
        targets = [Token(BOS_TOKEN)] + [Token(t.text) for t in word_tokens] + [Token(EOS_TOKEN)]
        return Instance({"tokens": TextField(word_tokens), "targets": TextField(targets)})

    def apply_token_indexers(self, instance: Instance) -> None:
        field_of(instance, "tokens", TextField).token_indexers = self.token_indexers
        field_of(instance, "targets", TextField).token_indexers = self.target_indexers


def _split_sentences(tokens: List[Token]) -> List[List[Token]]:
    """Cut a paragraph after sentence-final punctuation (simple, but enough for LM training)."""
    sentences: List[List[Token]] = [[]]
    for token in tokens:
        sentences[-1].append(token)
        if _SENTENCE_END.match(token.ensure_text()):
            sentences.append([])
    return [s for s in sentences if s]
