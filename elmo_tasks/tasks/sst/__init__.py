"""SST-5 (Stanford Sentiment Treebank, fine-grained) with the biattentive classification network.

Registered: reader ``sst_ptb_trees``, model ``biattentive_classifier``, predictor ``sst_sentiment``.
"""

from elmo_tasks.tasks.sst.model import BiattentiveClassifier
from elmo_tasks.tasks.sst.predictor import SstSentimentPredictor
from elmo_tasks.tasks.sst.reader import SstTreesReader

__all__ = ["BiattentiveClassifier", "SstSentimentPredictor", "SstTreesReader"]
