"""SST-5 (Stanford Sentiment Treebank, fine-grained) with the biattentive classification network.

Registered (names.py): reader ``sst5_reader``, model ``sst5_model``, predictor ``sst5``, and their
earlier names ``sst_ptb_trees``, ``biattentive_classifier``, ``sst_sentiment``.
"""

from allennlp.data import DatasetReader

from elmo_tasks.tasks.sst.model import BiattentiveClassifier
from elmo_tasks.tasks.sst.names import READER
from elmo_tasks.tasks.sst.predictor import SstSentimentPredictor
from elmo_tasks.tasks.sst.reader import SstTreesReader

# The reader's task name; reader.py registers its earlier name.
DatasetReader.register(READER)(SstTreesReader)

__all__ = ["BiattentiveClassifier", "SstSentimentPredictor", "SstTreesReader"]
