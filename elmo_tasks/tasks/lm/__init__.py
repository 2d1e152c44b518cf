"""Training an ELMo biLM from raw text: reader, model, export callback and `allennlp export-bilm`."""
from elmo_tasks.tasks.lm.dataset_reader import BilmRawTextReader
from elmo_tasks.tasks.lm.export import ExportBilm, ExportBilmCallback, export_model
from elmo_tasks.tasks.lm.model import BilmLanguageModel

__all__ = ["BilmRawTextReader", "BilmLanguageModel", "ExportBilm", "ExportBilmCallback", "export_model"]
