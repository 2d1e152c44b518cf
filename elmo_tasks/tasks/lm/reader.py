"""Raw text -> biLM training instances: character ids for the input, word ids as targets.

How text becomes sentences (files, decoding, paragraphs, cutting) is :mod:`elmo_tasks.bilm.raw_text`,
shared with ``bilm-perplexity``, which reads its text that way without AllenNLP.
"""

from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Union

from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Instance, Token, TokenIndexer, Tokenizer
from allennlp.data.fields import TextField
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer

from elmo_tasks.bilm.characters import BOS_TOKEN, EOS_TOKEN
from elmo_tasks.bilm.raw_text import RawTextSentences, TextPathError, TextSettingError, check_reading_settings
from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.lm.text_source import LineStats
from elmo_tasks.tokenization import blank_english_tokenizer

#: The softmax vocabulary namespace the targets are indexed in.
LM_TARGET_NAMESPACE = "lm_targets"


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
        try:
            check_reading_settings(text_format, max_sentence_length, fallback_encoding)
        except TextSettingError as err:
            raise ConfigurationError(str(err)) from None
        self.tokenizer = tokenizer or blank_english_tokenizer()
        self.token_indexers = token_indexers or {"elmo": ELMoTokenCharactersIndexer()}
        self.text_format = text_format
        self.max_sentence_length = max_sentence_length
        self.drop_wikiextractor_markup = drop_wikiextractor_markup
        self.unescape_html = unescape_html
        self.fallback_encoding = fallback_encoding
        self.target_indexers: Dict[str, TokenIndexer] = {"lm": SingleIdTokenIndexer(namespace=target_namespace)}

    def _read(self, file_path: str) -> Iterable[Instance]:
        for sentence in self.shard_iterable(self.sentences(file_path)):
            yield self.text_to_instance(sentence)

    def sentences(self, file_path: str) -> Iterator[List[Token]]:
        """Every sentence of ``file_path`` as training reads it (cleaned, tokenized, cut), in
        file order and unsharded."""
        try:
            yield from self._raw_text().sentences(file_path)
        except TextPathError as err:  # the data path of a config: what to change is the config
            raise ConfigurationError(str(err)) from None

    def _sentences(self, files: List[str], stats: LineStats, counts: Dict[str, int]) -> Iterator[List[Token]]:
        """The sentences of ``files``, counted into ``stats`` and ``counts`` (scripts/build_bilm_corpus.py)."""
        return self._raw_text().sentences_of_files(files, stats, counts)

    def _raw_text(self) -> RawTextSentences[Token]:
        """How this reader's settings (as they are now) turn text into sentences."""
        return RawTextSentences(
            self.tokenizer.tokenize,
            Token.ensure_text,
            self.text_format,
            self.max_sentence_length,
            self.drop_wikiextractor_markup,
            self.unescape_html,
            self.fallback_encoding,
        )

    def text_to_instance(self, tokens: Union[str, Sequence[Union[str, Token]]]) -> Instance:
        """``tokens``: a list of :class:`Token` or strings (a string is tokenized first)."""
        words = self.tokenizer.tokenize(tokens) if isinstance(tokens, str) else tokens
        word_tokens = [t if isinstance(t, Token) else Token(t) for t in words]
        targets = [Token(BOS_TOKEN)] + [Token(t.text) for t in word_tokens] + [Token(EOS_TOKEN)]
        return Instance({"tokens": TextField(word_tokens), "targets": TextField(targets)})

    def apply_token_indexers(self, instance: Instance) -> None:
        field_of(instance, "tokens", TextField).token_indexers = self.token_indexers
        field_of(instance, "targets", TextField).token_indexers = self.target_indexers
