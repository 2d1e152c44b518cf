"""SRL prediction speed: sentences and predicates per second over CoNLL-2005 devel, with ELMo.

Runs ``srl-props``'s prediction path (whole sentences per batch, constrained Viterbi) with the
srl_elmo model at the paper's size (8 alternating LSTM layers of 300 units, 100-d word and
predicate embeddings) and the shipped small biLM, single-threaded by default. Without
``--archive`` the model has random weights: the time per sentence does not depend on the weights.
It also counts the biLM's passes to show they equal the number of distinct sentences, not the
number of predicates.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/srl_predict_speed.py                # all of devel
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/srl_predict_speed.py --sentences 200
    .venv/bin/python benchmarks/srl_predict_speed.py --archive runs/srl/elmo/seed0/model.tar.gz
"""

import argparse
import json
import os
import time

import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.data.token_indexers import (
    ELMoTokenCharactersIndexer,
    SingleIdTokenIndexer,
)
from allennlp.models import Model
from allennlp.models.archival import load_archive
from bench_files import data_file

import elmo_tasks.plugin  # noqa: F401
from elmo_tasks.modules import find_elmo_embedder
from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE
from elmo_tasks.tasks.srl.reader import SrlConllReader, read_srl_sentences
from elmo_tasks.tasks.srl.sentence_prediction import predict_sentences

# the real data (docs/DATA.md): ELMO_TASKS_SHARED_DATA, default data/ in the checkout
DEFAULT_DATA = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    os.environ.get("ELMO_TASKS_SHARED_DATA", "data"),
    "conll2005/dev-set.gz",
)


def paper_size_model(sentences) -> Model:
    """srl_elmo at the paper's size with random weights and a vocabulary from the sentences."""
    vocab = Vocabulary(non_padded_namespaces=[])
    for sentence in sentences:
        for word in sentence.words:
            vocab.add_token_to_namespace(word.lower(), "tokens")
    for tag in ["O", "B-V", "B-A0", "I-A0", "B-A1", "I-A1", "B-A2", "I-A2", "B-AM-TMP", "I-AM-TMP"]:
        vocab.add_token_to_namespace(tag, "srl_roles")
    params = Params(
        {
            "type": "srl_model",
            "predicate_embedding_dim": 100,
            "text_field_embedder": {
                "token_embedders": {
                    "tokens": {"type": "embedding", "embedding_dim": 100},
                    "elmo": {
                        "type": "fast_elmo",
                        "options_file": SMALL_OPTIONS_FILE,
                        "weight_file": SMALL_WEIGHT_FILE,
                        "dropout": 0.1,
                    },
                }
            },
            "encoder": {
                "type": "alternating_lstm",
                "hidden_size": 300,
                "num_layers": 8,
                "recurrent_dropout_probability": 0.1,
                "use_highway": True,
            },
        }
    )
    return Model.from_params(vocab=vocab, params=params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data", type=data_file, default=DEFAULT_DATA, help="CoNLL-2005 file or folder (default: dev-set.gz)"
    )
    parser.add_argument("--sentences", type=int, default=0, help="only the first N sentences (0: all)")
    parser.add_argument("--archive", help="a trained srl_elmo model.tar.gz instead of random weights")
    parser.add_argument("--batch-size", type=int, default=64, help="predicates per batch (default 64)")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    sentences = list(read_srl_sentences(args.data))
    if args.sentences:
        sentences = sentences[: args.sentences]
    if args.archive:
        archive = load_archive(args.archive)
        model, reader = archive.model, archive.validation_dataset_reader
    else:
        model = paper_size_model(sentences)
        reader = SrlConllReader(
            token_indexers={"tokens": SingleIdTokenIndexer(lowercase_tokens=True), "elmo": ELMoTokenCharactersIndexer()}
        )
    model.eval()
    elmo = find_elmo_embedder(model)
    predicates = sum(len(s.props.predicate_positions) for s in sentences)
    with_predicates = sum(1 for s in sentences if s.props.predicate_positions)
    started = time.perf_counter()
    with torch.no_grad():
        for _ in predict_sentences(model, reader, iter(sentences), args.batch_size):
            pass
    seconds = time.perf_counter() - started
    result = {
        "data": os.path.relpath(args.data),
        "sentences": len(sentences),
        "sentences_with_predicates": with_predicates,
        "predicates": predicates,
        "seconds": round(seconds, 1),
        "sentences_per_second": round(len(sentences) / seconds, 2),
        "predicates_per_second": round(predicates / seconds, 2),
        "bilm_sentence_passes": elmo.sentences_run if elmo is not None else None,
        "threads": torch.get_num_threads(),
        "weights": args.archive or "random (paper size)",
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
