"""How the ``srl`` predictor finds the predicates of a raw sentence when the input names none.

First choice, :class:`PosVerbFinder`: the POS tagger shipped with the biLM
(``pretrained/bilm_small/pos_tagger.npz``, the POS probe's linear classifier over one frozen
biLM layer, PTB tags of CoNLL-2012, see the model card) runs on the shipped biLM it was trained
on. It always loads those shipped files by package reference, never the SRL model's own
embedder nor ``ELMO_OPTIONS``/``ELMO_WEIGHTS``: a linear tagger only means something on the
exact layer it was fitted to, and this way it works for every SRL model, with or without ELMo.

Which tagged words are predicates (:func:`verbs_from_tags`), following CoNLL-2005's props
(the default SRL data): every ``VB*`` word except

* forms of *be* (``is``, ``was``, ``'s``, ...): CoNLL-2005 never marks *be* as a predicate,
  copula or auxiliary (PropBank I has no *be* frames; CoNLL-2012 does, so pass ``verbs`` there);
* forms of *have* and *do* used as auxiliaries, i.e. followed by another verb once adverbs,
  negation and an inverted subject pronoun are skipped (``has eaten``, ``did not go``,
  ``did you see``). As main verbs (``I have a dog``) they are predicates, as in CoNLL-2005
  (which marks about three quarters of its main-verb *have*/*do* and almost no auxiliary one).

Modals are tagged ``MD`` and so never are predicates (CoNLL-2005 labels them ``AM-MOD``).

Fallback, :func:`guess_verbs`: a word-list heuristic, used only when the tagger's or the
shipped biLM's files are missing from the installation (the predictor's response then says so
and why). It misses many verbs (``sells``, ``put``) and takes some adjectives (``interested``).
"""

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from elmo_tasks.bilm import BiLM, load_bilm
from elmo_tasks.bilm.references import BilmReferenceError, resolve_bilm_file
from elmo_tasks.pretrained import SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE
from elmo_tasks.probes.features import layer_features
from elmo_tasks.probes.pos import LinearPosTagger

logger = logging.getLogger(__name__)

SHIPPED_TAGGER_REFERENCE = "elmo_tasks:pretrained/bilm_small/pos_tagger.npz"
METHOD = "heuristic: a list of frequent verb forms plus -ed/-ing words not after a determiner"

_BE = frozenset(["be", "am", "is", "are", "was", "were", "been", "being", "'s", "'re", "'m"])
_HAVE_DO = frozenset(["have", "has", "had", "having", "'ve", "'d", "do", "does", "did"])
_NEGATION = frozenset(["not", "n't", "never"])
_INVERTED_SUBJECT_TAGS = frozenset({"PRP", "EX"})  # "did you see", "has there been"


def verbs_from_tags(words: Sequence[str], tags: Sequence[str]) -> List[int]:
    """Indices of the predicates among ``words`` given their PTB ``tags`` (rules: module docstring)."""
    found = []
    for index, (word, tag) in enumerate(zip(words, tags, strict=True)):
        lower = word.lower()
        if not tag.startswith("VB") or lower in _BE:
            continue
        if lower in _HAVE_DO and _verb_follows(words, tags, index + 1):
            continue
        found.append(index)
    return found


def _verb_follows(words: Sequence[str], tags: Sequence[str], start: int) -> bool:
    """Whether a ``VB*`` word comes next, skipping adverbs, negation and one subject pronoun."""
    subject_skipped = False
    for word, tag in zip(words[start:], tags[start:], strict=True):
        if tag.startswith("RB") or word.lower() in _NEGATION:
            continue
        if tag in _INVERTED_SUBJECT_TAGS and not subject_skipped:
            subject_skipped = True
            continue
        return tag.startswith("VB")
    return False


@dataclass
class FoundVerbs:
    """The predicates found in one sentence and how: ``method`` is ``"pos_tagger"`` (then
    ``pos_tags`` holds the tags) or ``"heuristic"`` (then ``note`` says why and what it does)."""

    indices: List[int]
    method: str
    pos_tags: Optional[List[str]] = None
    note: Optional[str] = None


class PosVerbFinder:
    """The shipped POS tagger on the shipped biLM, loaded on first use and kept.

    The file arguments exist for tests and for a tagger trained on another biLM (``allennlp
    bilm-probe --save-pos-tagger``); each is a path or an ``elmo_tasks:`` package reference.
    """

    def __init__(
        self,
        tagger_file: str = SHIPPED_TAGGER_REFERENCE,
        options_file: str = SMALL_OPTIONS_REFERENCE,
        weight_file: str = SMALL_WEIGHT_REFERENCE,
    ) -> None:
        self.files = (tagger_file, options_file, weight_file)
        self._loaded: Optional[Tuple[BiLM, LinearPosTagger]] = None
        self._warned = False

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def missing_files(self) -> List[str]:
        """The files this finder needs that are not there (an installation without them)."""
        missing = []
        for name in self.files:
            try:
                if not Path(resolve_bilm_file(name)).is_file():
                    missing.append(name)
            except BilmReferenceError:
                missing.append(name)
        return missing

    def _load(self) -> Tuple[BiLM, LinearPosTagger]:
        if self._loaded is None:
            tagger_file, options_file, weight_file = (resolve_bilm_file(name) for name in self.files)
            bilm = load_bilm(options_file, weight_file)
            bilm.eval()
            self._loaded = bilm, LinearPosTagger.load(tagger_file)
        return self._loaded

    def tag(self, sentences: Sequence[Sequence[str]]) -> List[List[str]]:
        """PTB tags of every token of ``sentences`` (one biLM pass over all of them)."""
        if not sentences:
            return []
        bilm, tagger = self._load()
        layers = layer_features(bilm, sentences, progress=False)
        if tagger.layer >= len(layers) or layers[tagger.layer].shape[1] != tagger.weight.shape[1]:
            raise ValueError(
                f"{self.files[0]} was not trained on the biLM {self.files[1]}: it reads layer {tagger.layer} "
                f"of {tagger.weight.shape[1]} dims; the biLM has {len(layers)} layers of "
                f"{layers[0].shape[1]} dims"
            )
        tags = tagger.predict(layers[tagger.layer])
        result, start = [], 0
        for sentence in sentences:
            result.append(tags[start : start + len(sentence)])
            start += len(sentence)
        return result

    def find(self, sentences: Sequence[Sequence[str]]) -> List[FoundVerbs]:
        """The predicates of each sentence: the tagger's, or the heuristic's when its files are missing."""
        if not sentences:
            return []
        missing = self.missing_files()
        if missing:
            note = f"{METHOD} (fallback: the POS tagger's files are missing: {', '.join(missing)})"
            if not self._warned:
                logger.warning("SRL predicates: %s", note)
                self._warned = True
            return [FoundVerbs(guess_verbs(words), "heuristic", note=note) for words in sentences]
        return [
            FoundVerbs(verbs_from_tags(words, tags), "pos_tagger", pos_tags=tags)
            for words, tags in zip(sentences, self.tag(sentences), strict=True)
        ]


# The fallback heuristic's word lists (written as text, one `split`, so that they read and edit as prose).
_DETERMINERS = frozenset("a an the this that these those my your his her its our their some any no every each".split())  # noqa: SIM905
_AUXILIARIES = frozenset(
    "be am is are was were been being have has had having do does did will would shall should can could may might "  # noqa: SIM905
    "must 's 're 've 'd 'll 'm".split()
)
_NOT_VERBS = frozenset(
    "during morning evening nothing something anything everything thing king ring spring string "  # noqa: SIM905
    "ceiling building wedding bed red need seed feed speed hundred".split()
)
_VERB_FORMS = frozenset(
    """say says said go goes went gone get gets got gotten make makes made know knows knew known think thinks
    thought take takes took taken see sees saw seen come comes came give gives gave given find finds found tell
    tells told become becomes became leave leaves left feel feels felt bring brings brought begin begins began
    begun keep keeps kept hold holds held write writes wrote written stand stands stood hear hears heard let
    lets mean means meant set sets meet meets met run runs ran pay pays paid sit sits sat speak speaks spoke
    spoken lie lies lay lead leads led grow grows grew grown lose loses lost fall falls fell fallen send sends
    sent build builds built understand understands understood draw draws drew drawn break breaks broke broken
    spend spends spent cut cuts rise rises rose risen drive drives drove driven buy buys bought wear wears wore
    worn choose chooses chose chosen seek seeks sought throw throws threw thrown catch catches caught deal deals
    dealt win wins won sell sells sold eat eats ate eaten teach teaches taught fight fights fought sing sings sang
    sung sleep sleeps slept fly flies flew flown forget forgets forgot forgotten want wants like likes use uses
    try tries help helps show shows ask asks call calls move moves live lives believe believes happen happens
    provide provides include includes continue continues change changes play plays open opens close closes
    expect expects plan plans agree agrees report reports reach reaches""".split()  # noqa: SIM905
)


def guess_verbs(words: Sequence[str]) -> List[int]:
    """The fallback: indices of the words taken as verbs, with no tagger.

    A word is a verb when it is one of a list of frequent English verb forms, or ends in
    ``-ed`` / ``-ing`` and does not follow a determiner (``the running water``); auxiliaries and
    modals never are (not even main-verb *have*, which the tagger rules keep).
    """
    found = []
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in _AUXILIARIES or lower in _NOT_VERBS or not lower.isalpha():
            continue
        if index > 0 and words[index - 1].lower() in _DETERMINERS:
            continue
        if lower in _VERB_FORMS or (len(lower) > 4 and lower.endswith(("ed", "ing"))):
            found.append(index)
    return found
