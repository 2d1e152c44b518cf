"""``allennlp elmo-embed``: ELMo vectors for a file of sentences, written to hdf5."""
import argparse
import sys
from typing import List

import torch
from allennlp.commands.subcommand import Subcommand

from elmo_tasks.bilm import BilmError, load_bilm
from elmo_tasks.bilm.file_embedder import OutputMode, embed_file
from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE
from elmo_tasks.tokenization import blank_english_tokenizer

DESCRIPTION = """Embed a file with one sentence per line. The hdf5 output has one dataset per
line, named by its 0-based line number, plus 'sentence_to_index' (json: sentence -> line)."""


@Subcommand.register("elmo-embed")
class ElmoEmbed(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        sub = parser.add_parser(self.name, description=DESCRIPTION, help="Embed a text file with ELMo (hdf5 output).")
        sub.add_argument("input_file", help="UTF-8 text, one sentence per line (no empty lines)")
        sub.add_argument("output_file", help="the hdf5 file to write")
        sub.add_argument("--options-file", help="the biLM's options.json (default: the shipped small biLM)")
        sub.add_argument("--weight-file", help="the biLM's hdf5 weights (default: the shipped small biLM)")
        what = sub.add_mutually_exclusive_group()
        what.add_argument("--all", action="store_const", dest="mode", const="all",
                          help="store all layers: (L+1, tokens, dim) per sentence (the default)")
        what.add_argument("--top", action="store_const", dest="mode", const="top", help="store the top layer only")
        what.add_argument("--average", action="store_const", dest="mode", const="average", help="store the layer average")
        what.add_argument("--mix", type=_weights, metavar="W0,W1,...",
                          help="store sum_j w_j * layer_j with these weights")
        sub.add_argument("--tokenize", action="store_true", help="tokenize with spaCy's rule-based English tokenizer "
                         "instead of splitting on whitespace")
        sub.add_argument("--batch-size", type=int, default=64, help="sentences per batch (default 64)")
        sub.add_argument("--cuda-device", type=int, default=-1, help="GPU id, or -1 for the CPU (default)")
        sub.add_argument("--stateful", action="store_true", help="carry LSTM states like the original: keep file "
                         "order, row r of each batch continues row r of the previous batch")
        sub.add_argument("--no-progress", action="store_true", help="do not show a progress bar")
        sub.set_defaults(func=_run, mode=None)
        return sub


def _weights(text: str) -> List[float]:
    try:
        return [float(w) for w in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--mix takes comma-separated numbers, got {text!r}") from None


def _run(args: argparse.Namespace) -> None:
    if args.batch_size < 1:
        _fail("--batch-size must be at least 1")
    if (args.options_file is None) != (args.weight_file is None):
        _fail("give both --options-file and --weight-file, or neither (for the shipped small biLM)")
    if args.options_file is None:
        args.options_file, args.weight_file = SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE
    mode = OutputMode("mix", args.mix) if args.mix is not None else OutputMode(args.mode or "all")
    device = torch.device("cpu" if args.cuda_device < 0 else f"cuda:{args.cuda_device}")
    try:
        model = load_bilm(args.options_file, args.weight_file, stateful=args.stateful).to(device)
        count = embed_file(
            model, args.input_file, args.output_file, mode,
            batch_size=args.batch_size, device=device,
            tokenize=_spacy_words() if args.tokenize else None,
            progress=not args.no_progress,
        )
    except BilmError as err:
        _fail(str(err))
    print(f"elmo-embed: wrote {count} sentences to {args.output_file}", file=sys.stderr)


def _spacy_words():
    tokenizer = blank_english_tokenizer()
    return lambda text: [token.text for token in tokenizer.tokenize(text)]


def _fail(message: str) -> None:
    print(f"elmo-embed: error: {message}", file=sys.stderr)
    sys.exit(2)
