"""CoNLL-2003 NER (ELMo paper, section 5): BiLSTM-CRF tagger, BIOUL tag helpers, predictor.

Data are read with AllenNLP's own ``conll2003`` reader (IOB1 converted to BIOUL), or with
``ner_reader`` (``reader.py``), the same reader with checks that name a bad line; the metric is
AllenNLP's ``SpanBasedF1Measure`` with its counts summed over distributed workers (``metric.py``),
which gives conlleval's numbers here (see ``tags.py``).
"""

from elmo_tasks.tasks.ner.model import ElmoCrfTagger
from elmo_tasks.tasks.ner.predictor import NerTaggerPredictor
from elmo_tasks.tasks.ner.reader import CheckedConll2003Reader

__all__ = ["CheckedConll2003Reader", "ElmoCrfTagger", "NerTaggerPredictor"]
