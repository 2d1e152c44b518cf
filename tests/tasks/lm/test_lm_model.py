"""AllenNLP's model checks for the biLM language model: train, save, load, same predictions."""

import json

from allennlp.common.testing import ModelTestCase

from tests.conftest import ROOT

CONFIG = str(ROOT / "experiments" / "bilm_tiny.jsonnet")
# one short epoch: the check is the archive round trip, not the quality of the model
# (the checks compare the first batch of two loaders: it must not depend on random bucketing)
ONE_EPOCH = json.dumps(
    {
        "trainer.num_epochs": 1,
        "dataset_reader.max_instances": 96,
        "trainer.callbacks": [],
        "data_loader.batch_sampler.shuffle": False,
        "data_loader.batch_sampler.padding_noise": 0.0,
    }
)


class TestBilmLanguageModel(ModelTestCase):
    def test_can_train_save_and_load(self, monkeypatch):
        monkeypatch.chdir(ROOT)  # the config's fixture paths are relative to the repo root
        model, loaded = self.ensure_model_can_train_save_and_load(CONFIG, overrides=ONE_EPOCH, seed=1)
        # in evaluation both score the same text with the exact softmax: same perplexity
        assert model.get_metrics()["ppl_exact"] == loaded.get_metrics()["ppl_exact"]
