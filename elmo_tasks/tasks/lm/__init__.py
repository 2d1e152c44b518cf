"""Training an ELMo biLM from raw text: reader, model, softmax and the export callback."""

from elmo_tasks.tasks.lm.export import ExportBilmCallback, export_model
from elmo_tasks.tasks.lm.model import BilmLanguageModel
from elmo_tasks.tasks.lm.reader import BilmRawTextReader

__all__ = ["BilmRawTextReader", "BilmLanguageModel", "ExportBilmCallback", "export_model"]
