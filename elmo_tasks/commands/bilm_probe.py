"""``allennlp bilm-probe``: the paper's intrinsic probes (section 5.3) for every biLM layer."""

import argparse
import json
import sys
import time

import torch
from allennlp.commands.subcommand import Subcommand

from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE

DESCRIPTION = """POS tagging (a linear classifier on one frozen layer) and word sense
disambiguation (1-nearest-neighbour over sense centroids) for each layer of a biLM, trained on
one CoNLL-2012 *_gold_conll file and tested on another, with a random-weights biLM of the same
size as the control. Prints a markdown table; --output-json keeps every number."""


@Subcommand.register("bilm-probe")
class BilmProbe(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        sub = parser.add_parser(self.name, description=DESCRIPTION, help="POS and WSD probes of a biLM's layers.")
        sub.add_argument("train_file", help="CoNLL-2012 *_gold_conll(.gz) to train the probes on (e.g. the dev file)")
        sub.add_argument("test_file", help="CoNLL-2012 *_gold_conll(.gz) to score them on (e.g. the test file)")
        sub.add_argument("--options-file", default=SMALL_OPTIONS_FILE, help="default: the shipped small biLM")
        sub.add_argument("--weight-file", default=SMALL_WEIGHT_FILE, help="default: the shipped small biLM")
        sub.add_argument("--no-random-control", action="store_true", help="skip the random-weights control")
        sub.add_argument("--max-sentences", type=int, default=None, help="read at most this many sentences per file")
        sub.add_argument("--save-pos-tagger", help="write the best layer's POS tagger (.npz) here")
        sub.add_argument("--output-json", help="write all numbers here")
        sub.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
        sub.add_argument("--seed", type=int, default=0)
        sub.set_defaults(func=_run)
        return sub


def _run(args: argparse.Namespace) -> None:
    from elmo_tasks.probes.run import best_tagger, load_split, markdown_table, probe_bilm

    torch.set_num_threads(max(1, args.threads))
    started = time.time()
    train = load_split(args.train_file, args.max_sentences)
    test = load_split(args.test_file, args.max_sentences)
    results = {"trained": probe_bilm(args.options_file, args.weight_file, train, test, seed=args.seed)}
    if not args.no_random_control:
        results["random weights (control)"] = probe_bilm(args.options_file, None, train, test, seed=args.seed)
    if args.save_pos_tagger:
        best_tagger(results["trained"]).save(args.save_pos_tagger)
    if args.output_json:
        shown = {name: {k: v for k, v in r.items() if k != "taggers"} for name, r in results.items()}
        with open(args.output_json, "w") as handle:
            json.dump(
                {
                    "train_file": args.train_file,
                    "test_file": args.test_file,
                    "options_file": args.options_file,
                    "weight_file": args.weight_file,
                    "results": shown,
                },
                handle,
                indent=2,
            )
    print(markdown_table(results))
    counts = results["trained"]["counts"]
    print(
        f"bilm-probe: {counts['train_tokens']} training and {counts['test_tokens']} test tokens "
        f"({counts['test_sense_words']} with a word sense) in {time.time() - started:.0f}s",
        file=sys.stderr,
    )
