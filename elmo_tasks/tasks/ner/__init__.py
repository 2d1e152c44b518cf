"""CoNLL-2003 NER (ELMo paper, section 5): BiLSTM-CRF tagger, BIOUL tag helpers, predictor.

Data are read with AllenNLP's own ``conll2003`` reader (IOB1 converted to BIOUL); the metric is
AllenNLP's ``SpanBasedF1Measure`` with its counts summed over distributed workers (``metric.py``),
which gives conlleval's numbers here (see ``tags.py``).
"""

from elmo_tasks.tasks.ner.model import ElmoCrfTagger
from elmo_tasks.tasks.ner.predictor import NerTaggerPredictor

__all__ = ["ElmoCrfTagger", "NerTaggerPredictor"]
