"""Every task's registered names (``elmo_tasks.tasks.names.TaskNames``) build its classes, and the
names of earlier versions build the same ones, so old configs and archives keep working."""

from types import ModuleType
from typing import Optional

import pytest
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.tasks.coref import names as coref_names
from elmo_tasks.tasks.coref.model import CorefElmo
from elmo_tasks.tasks.coref.predictor import CorefPredictor
from elmo_tasks.tasks.coref.reader import Conll2012CorefReader
from elmo_tasks.tasks.ner import ElmoCrfTagger, NerTaggerPredictor
from elmo_tasks.tasks.ner import names as ner_names
from elmo_tasks.tasks.ner.reader import CheckedConll2003Reader
from elmo_tasks.tasks.snli import names as snli_names
from elmo_tasks.tasks.snli.model import EsimElmo
from elmo_tasks.tasks.snli.predictor import SnliPairPredictor
from elmo_tasks.tasks.snli.reader import SnliJsonlReader
from elmo_tasks.tasks.squad import names as squad_names
from elmo_tasks.tasks.squad.model import BidafSelfAttention
from elmo_tasks.tasks.squad.predictor import SquadQaPredictor
from elmo_tasks.tasks.squad.reader import SquadV1Reader
from elmo_tasks.tasks.srl import SrlConllReader, SrlElmo, SrlPredictor
from elmo_tasks.tasks.srl import names as srl_names
from elmo_tasks.tasks.sst import names as sst_names
from elmo_tasks.tasks.sst.model import BiattentiveClassifier
from elmo_tasks.tasks.sst.predictor import SstSentimentPredictor
from elmo_tasks.tasks.sst.reader import SstTreesReader

# the task's names module, its model, reader and predictor classes, and its predictor's name
TASKS = {
    "ner": (ner_names, ElmoCrfTagger, CheckedConll2003Reader, NerTaggerPredictor, "ner"),
    "srl": (srl_names, SrlElmo, SrlConllReader, SrlPredictor, "srl"),
    "coref": (coref_names, CorefElmo, Conll2012CorefReader, CorefPredictor, "coref"),
    "snli": (snli_names, EsimElmo, SnliJsonlReader, SnliPairPredictor, "snli"),
    "squad": (squad_names, BidafSelfAttention, SquadV1Reader, SquadQaPredictor, "squad"),
    "sst": (sst_names, BiattentiveClassifier, SstTreesReader, SstSentimentPredictor, "sst5"),
}


@pytest.mark.parametrize("task", sorted(TASKS))
def test_old_names_still_build_the_same_classes(task: str) -> None:
    names, model, reader, predictor, predictor_name = TASKS[task]
    built = (model, "from_partial_objects")
    assert Model.resolve_class_name(names.MODEL) == Model.resolve_class_name(names.OLD_MODEL) == built
    assert DatasetReader.by_name(names.READER) is reader
    assert Predictor.by_name(names.PREDICTOR) is predictor
    old_reader: Optional[str] = getattr(names, "OLD_READER", None)
    if old_reader is not None:
        assert DatasetReader.by_name(old_reader) is reader
    old_predictor: Optional[str] = getattr(names, "OLD_PREDICTOR", None)
    if old_predictor is not None:
        assert Predictor.by_name(old_predictor) is predictor
    assert model.default_predictor == names.PREDICTOR == predictor_name


def test_names_follow_the_task() -> None:
    """The predictor is named by the task, the model and the reader after it."""
    for names_module, *_ in TASKS.values():
        names: ModuleType = names_module
        task_names = names.NAMES
        assert (
            task_names.task,
            f"{task_names.task}_model",
            f"{task_names.task}_reader",
        ) == (names.PREDICTOR, names.MODEL, names.READER)
