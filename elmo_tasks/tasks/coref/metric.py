"""MUC, B-cubed and CEAF-phi4 exactly as the official CoNLL-2012 scorer (scorer.pl v8.01) computes them.

Definitions (Pradhan et al. 2014, "Scoring coreference partitions of predicted mentions"):
key = gold clusters, response = predicted clusters, mentions matched by exact boundaries.

- MUC (Vilain et al. 1995): recall = sum_K (|K| - p(K)) / sum_K (|K| - 1), where p(K) is the
  number of parts the response cuts K into (a key mention missing from the response is a part
  of its own); precision swaps key and response. Singletons have no links, so they change
  nothing.
- B-cubed (Bagga and Baldwin 1998): for every response mention m, precision adds
  |R(m) & K(m)| / |R(m)| and recall adds |R(m) & K(m)| / |K(m)|; precision is divided by the
  number of response mentions, recall by the number of key mentions.
- CEAF-phi4 (Luo 2005, entity-based): the one-to-one alignment of key and response clusters
  that maximises sum phi4(K, R) = 2 |K & R| / (|K| + |R|); recall divides that sum by the number
  of key clusters, precision by the number of response clusters.

How scorer.pl v8.01 treats mentions (``IdentifMentions``), reproduced here:
- Response mentions absent from the key ("twinless") stay in the response: they lower B-cubed
  and CEAF precision and count as MUC response links; response singletons count too (B-cubed
  and CEAF), so a system should not output singletons.
- A response mention repeated after it was already matched to a key mention is dropped
  (clusters left empty are dropped as well); more than 10 repeated mentions in a response make
  the scorer refuse to score (``ResponseRejected`` here). Repeats of twinless mentions are kept.
  scorer.pl's count of repeats is never reset between the metrics that ``scorer.pl all`` runs
  in turn (muc, bcub, ceafm, ceafe, blanc), so with 3 to 10 repeats ``all`` stops before CEAF-e
  (with 6 or more, before B-cubed); the numbers here are those of ``scorer.pl muc|bcub|ceafe``
  run one metric at a time.
- A key mention that appears twice is one mention, listed twice: every occurrence takes the id
  of the last one, and key cluster sizes count both.
- Scores are summed over documents (numerators and denominators separately) before dividing:
  the numbers are micro-averages over the corpus, not means of per-document scores. Within a
  document the float operations are the scorer's, in its order; the sum over documents is exact
  (see ``Counts``), since scorer.pl's own order of documents changes from run to run.
- scorer.pl prints percentages truncated (not rounded) to two decimals; ``percent_as_printed``
  does the same.
"""

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, Iterable, List, Sequence, Tuple, Union

import numpy
from allennlp.training.metrics import Metric
from scipy.optimize import linear_sum_assignment

Span = Tuple[int, int]
MAX_REPEATED_RESPONSE_MENTIONS = 10
METRICS = ("muc", "bcub", "ceafe")


class ResponseRejected(ValueError):
    """The response repeats mentions so often that scorer.pl v8.01 refuses to score it."""


_COUNT_FIELDS = ("recall_num", "recall_den", "precision_num", "precision_den")


@dataclass
class Counts:
    """Numerators and denominators of recall and precision, summed over documents.

    Sums over documents are kept exactly (as fractions) and rounded to a float once. scorer.pl
    adds documents in Perl's hash order, which changes from run to run, so the last bit of its
    B-cubed and CEAF sums can differ between two runs on the same files; where the exact value
    is a multiple of 0.01%, the truncated number it prints then flips between e.g. 66.99 and 67.
    An exact sum does not depend on the order; it is what the orders' results scatter around
    (in the cases checked, what most orders print).
    """

    recall_num: float = 0.0
    recall_den: float = 0.0
    precision_num: float = 0.0
    precision_den: float = 0.0

    def __post_init__(self) -> None:
        self._exact = [Fraction(getattr(self, name)) for name in _COUNT_FIELDS]

    def add(self, other: "Counts") -> None:
        for index, name in enumerate(_COUNT_FIELDS):
            self._exact[index] += other._exact[index]
            setattr(self, name, float(self._exact[index]))

    @property
    def recall(self) -> float:
        return self.recall_num / self.recall_den if self.recall_den else 0.0

    @property
    def precision(self) -> float:
        return self.precision_num / self.precision_den if self.precision_den else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class DocumentScores:
    """The counts of every metric for one document (or a sum of documents)."""

    mentions: Counts = field(default_factory=Counts)
    muc: Counts = field(default_factory=Counts)
    bcub: Counts = field(default_factory=Counts)
    ceafe: Counts = field(default_factory=Counts)
    repeated_response_mentions: int = 0

    def add(self, other: "DocumentScores") -> None:
        for name in ("mentions",) + METRICS:
            getattr(self, name).add(getattr(other, name))
        self.repeated_response_mentions += other.repeated_response_mentions

    @property
    def conll_f1(self) -> float:
        """The CoNLL-2012 score: the mean of MUC, B-cubed and CEAF-phi4 F1."""
        return sum(getattr(self, name).f1 for name in METRICS) / len(METRICS)


def _as_span(span: Sequence[int]) -> Span:
    """A mention as a hashable pair (clusters read from json, or a model's, hold lists)."""
    start, end = span
    return start, end


def _mention_ids(key: Sequence[Sequence[Span]], response: Sequence[Sequence[Span]]):
    """Key and response clusters as lists of mention ids, after the scorer's identification step."""
    key_ids: Dict[Span, int] = {}
    next_id = 0
    for cluster in key:
        for span in cluster:
            key_ids[_as_span(span)] = next_id  # a repeated key mention keeps the last id
            next_id += 1
    response_ids: Dict[Span, int] = {}
    assigned = set()
    exact = 0
    repeated = 0
    kept_response: List[List[Span]] = []
    for cluster in response:
        kept = []
        for span in map(_as_span, cluster):
            if span in response_ids:
                repeated += 1
                continue
            if span in key_ids and key_ids[span] not in assigned:
                assigned.add(key_ids[span])
                response_ids[span] = key_ids[span]
                exact += 1
            kept.append(span)
        if kept:
            kept_response.append(kept)
    for cluster in kept_response:
        for span in cluster:
            if span not in response_ids:
                response_ids[span] = next_id
                next_id += 1
    key_chains = [[key_ids[_as_span(span)] for span in cluster] for cluster in key if cluster]
    response_chains = [[response_ids[span] for span in cluster] for cluster in kept_response]
    mentions = Counts(exact, len(key_ids), exact, len(response_ids))
    return key_chains, response_chains, mentions, repeated


def _chain_of(chains: Sequence[Sequence[int]]) -> Dict[int, int]:
    """Mention id -> index of the LAST chain that holds it (as the scorer's ``Indexa``)."""
    index = {}
    for number, chain in enumerate(chains):
        for mention in chain:
            index[mention] = number
    return index


def muc(key: Sequence[Sequence[int]], response: Sequence[Sequence[int]]) -> Counts:
    key_chain = _chain_of(key)
    correct = 0
    for chain in response:
        for i, mention in enumerate(chain):
            if mention not in key_chain:
                continue
            if any(other in key_chain and key_chain[other] == key_chain[mention] for other in chain[i + 1 :]):
                correct += 1
    key_links = sum(len(chain) - 1 for chain in key if chain)
    response_links = sum(len(chain) - 1 for chain in response if chain)
    return Counts(correct, key_links, correct, response_links)


def b_cubed(key: Sequence[Sequence[int]], response: Sequence[Sequence[int]]) -> Counts:
    key_chain = _chain_of(key)
    precision = recall = 0.0
    for chain in response:
        for mention in chain:
            gold = key[key_chain[mention]] if mention in key_chain else []
            gold_set = set(gold)
            common = sum(1 for other in chain if other in gold_set)
            if chain:
                precision += common / len(chain)
            if gold:
                recall += common / len(gold)
    return Counts(recall, sum(len(chain) for chain in key), precision, sum(len(chain) for chain in response))


def phi4(key_chain: Sequence[int], response_chain: Sequence[int]) -> float:
    response_set = set(response_chain)
    common = sum(1 for mention in key_chain if mention in response_set)
    size = len(key_chain) + len(response_chain)
    return 2 * common / size if size else 0.0


def ceaf_entity(key: Sequence[Sequence[int]], response: Sequence[Sequence[int]]) -> Counts:
    similarity = numpy.zeros((len(key), len(response)))
    for i, key_chain in enumerate(key):
        for j, response_chain in enumerate(response):
            similarity[i, j] = phi4(key_chain, response_chain)
    total = 0.0
    if similarity.size:
        rows, columns = linear_sum_assignment(similarity, maximize=True)
        # summed in key order, as 1 - (1 - phi4): the scorer stores costs 1 - phi4 for its Munkres search
        for row, column in sorted(zip(rows.tolist(), columns.tolist(), strict=True)):
            total += 1 - (1 - float(similarity[row, column]))
    return Counts(total, sum(1 for chain in key if chain), total, sum(1 for chain in response if chain))


def score_document(key: Sequence[Sequence[Span]], response: Sequence[Sequence[Span]]) -> DocumentScores:
    """Every metric's counts for one document's key and response clusters (token spans)."""
    key_chains, response_chains, mentions, repeated = _mention_ids(key, response)
    return DocumentScores(
        mentions=mentions,
        muc=muc(key_chains, response_chains),
        bcub=b_cubed(key_chains, response_chains),
        ceafe=ceaf_entity(key_chains, response_chains),
        repeated_response_mentions=repeated,
    )


def score_corpus(pairs: Iterable[Tuple[Sequence[Sequence[Span]], Sequence[Sequence[Span]]]]) -> DocumentScores:
    """Summed counts over ``(key clusters, response clusters)`` per document, as scorer.pl sums them."""
    total = DocumentScores()
    for key, response in pairs:
        total.add(score_document(key, response))
        if total.repeated_response_mentions > MAX_REPEATED_RESPONSE_MENTIONS:
            raise ResponseRejected(
                f"the response repeats {total.repeated_response_mentions} mentions (more than "
                f"{MAX_REPEATED_RESPONSE_MENTIONS}); scorer.pl v8.01 refuses to score it. Write each mention once."
            )
    return total


def percent_as_printed(value: float) -> float:
    """A fraction as scorer.pl prints it: percent, truncated to two decimals (``int(x*10000)/100``)."""
    return math.floor(value * 10000) / 100


def summary_line(scores: DocumentScores) -> str:
    """``muc F bcub F ceafe F avg F``: F1 in percent, each truncated to two decimals like scorer.pl."""
    values = [percent_as_printed(getattr(scores, name).f1) for name in METRICS]
    average = percent_as_printed(scores.conll_f1)
    return " ".join(f"{name} {value:.2f}" for name, value in zip(METRICS + ("avg",), values + [average], strict=True))


@Metric.register("coref_conll2012_scores")
class ConllCorefScores(Metric):
    """MUC, B-cubed, CEAF-phi4 and their mean F1 over documents, with scorer.pl v8.01 semantics.

    Call with one list of predicted clusters and one list of gold clusters per document
    (clusters are lists of inclusive ``(start, end)`` token spans). ``get_metric`` returns
    fractions: ``{muc,bcub,ceafe}_{precision,recall,f1}``, ``mention_{precision,recall}`` and
    ``coref_f1`` (the paper's average F1).
    """

    supports_distributed = False

    def __init__(self) -> None:
        self._total = DocumentScores()

    def __call__(  # type: ignore[override]  # why: a Metric takes what its task scores, not Metric's tensors
        self, predicted_clusters: Sequence[Sequence[Sequence[Span]]], gold_clusters: Sequence[Sequence[Sequence[Span]]]
    ) -> None:
        for response, key in zip(predicted_clusters, gold_clusters, strict=True):
            self._total.add(score_document(key, response))

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        total = self._total
        metrics: Dict[str, float] = {}
        for name in METRICS:
            counts = getattr(total, name)
            metrics[f"{name}_precision"] = counts.precision
            metrics[f"{name}_recall"] = counts.recall
            metrics[f"{name}_f1"] = counts.f1
        metrics["mention_precision"] = total.mentions.precision
        metrics["mention_recall"] = total.mentions.recall
        metrics["coref_f1"] = total.conll_f1
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._total = DocumentScores()


def scores_as_dict(scores: DocumentScores) -> Dict[str, Union[float, Dict[str, float]]]:
    """Recall, precision and F1 (percent, unrounded) of every metric, for json output."""
    out: Dict[str, Union[float, Dict[str, float]]] = {}
    for name in ("mentions",) + METRICS:
        counts = getattr(scores, name)
        out[name] = {"recall": 100 * counts.recall, "precision": 100 * counts.precision, "f1": 100 * counts.f1}
    out["avg_f1"] = 100 * scores.conll_f1
    return out
