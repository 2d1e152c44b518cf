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


def test_bfloat16_autocast_trains_close_to_float32_and_evaluates_in_float32():
    """The same weights, batch and seed: the training loss moves by bfloat16's rounding only, and
    evaluation (exact softmax) gives float32's loss to the last bit whatever ``autocast`` says."""
    import torch
    from allennlp.data import Batch, Vocabulary
    from allennlp.data.tokenizers import WhitespaceTokenizer

    from elmo_tasks.tasks.lm import BilmLanguageModel
    from elmo_tasks.tasks.lm.reader import BilmRawTextReader

    reader = BilmRawTextReader(tokenizer=WhitespaceTokenizer(), text_format="sentence_per_line")
    instances = list(reader.read(str(ROOT / "fixtures" / "lm" / "train.txt")))[:16]
    for instance in instances:
        reader.apply_token_indexers(instance)
    vocab = Vocabulary.from_instances(instances)
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    options = str(ROOT / "fixtures" / "bilm_tf" / "options.json")
    weights = str(ROOT / "fixtures" / "bilm_tf" / "lm_weights.hdf5")
    losses = {}
    for autocast in (None, "bfloat16"):
        torch.manual_seed(3)
        model = BilmLanguageModel(
            vocab, options_file=options, pretrained_file=weights, num_samples=64, autocast=autocast
        )
        torch.manual_seed(4)
        model.train()
        train_loss = model(**tensors)["loss"]
        train_loss.backward()
        assert all(p.grad is None or p.grad.dtype == torch.float32 for p in model.parameters())
        model.eval()
        with torch.no_grad():
            losses[autocast] = (float(train_loss), float(model(**tensors)["loss"]))
    assert losses[None][0] != losses["bfloat16"][0]
    assert abs(losses["bfloat16"][0] - losses[None][0]) < 1e-2 * losses[None][0]
    assert losses["bfloat16"][1] == losses[None][1]
