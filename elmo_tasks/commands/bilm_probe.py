"""``allennlp bilm-probe``: the paper's intrinsic probes (section 5.3) for every biLM layer."""

import argparse
import json
import os
import sys
import time

from elmo_tasks.cli_options import CommandError, add_option
from elmo_tasks.commands.command_paths import CommandPathError, check_output_file
from elmo_tasks.commands.registration import register_command
from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE
from elmo_tasks.threads import ThreadSettingError, apply_thread_policy

_fail = CommandError("bilm-probe")

DESCRIPTION = """POS tagging (a linear classifier on one frozen layer) and word sense
disambiguation (1-nearest-neighbour over sense centroids) for each layer of a biLM, trained on
one CoNLL-2012 *_gold_conll file and tested on another, with a random-weights biLM of the same
size as the control. Prints a markdown table; --output-json keeps every number."""


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("train_file", help="CoNLL-2012 *_gold_conll(.gz) to train the probes on (e.g. the dev file)")
    parser.add_argument("test_file", help="CoNLL-2012 *_gold_conll(.gz) to score them on (e.g. the test file)")
    shipped = "the shipped small biLM"
    add_option(parser, "--options-file", default=SMALL_OPTIONS_FILE, shown=shipped, help="the biLM's options.json")
    add_option(parser, "--weight-file", default=SMALL_WEIGHT_FILE, shown=shipped, help="the biLM's hdf5 weights")
    parser.add_argument("--no-random-control", action="store_true", help="skip the random-weights control")
    parser.add_argument("--max-sentences", type=int, default=None, help="read at most this many sentences per file")
    parser.add_argument("--save-pos-tagger", help="write the best layer's POS tagger (.npz) here")
    parser.add_argument("--output-json", help="write all numbers here")
    parser.add_argument("--threads", type=int, help="torch threads (default: OMP_NUM_THREADS if set, else 1)")
    add_option(parser, "--seed", type=int, default=0, help="random seed of the probes and of the control's weights")


def _run(args: argparse.Namespace) -> None:
    """The probes, after checking the paths; a missing or bad file ends in one line, no traceback."""
    from elmo_tasks.bilm import BilmError

    try:
        for path in (args.train_file, args.test_file, args.options_file, args.weight_file):
            if not os.path.isfile(path):
                raise CommandPathError(f"{path} is not a file" if os.path.exists(path) else f"{path} does not exist")
        for path in filter(None, (args.output_json, args.save_pos_tagger)):
            check_output_file(path)
        _probe(args)
    except (CommandPathError, BilmError, OSError) as error:
        _fail(error)


def _probe(args: argparse.Namespace) -> None:
    from elmo_tasks.probes.run import best_tagger, load_split, markdown_table, probe_bilm

    try:
        apply_thread_policy(args.threads)
    except ThreadSettingError as err:
        _fail(err)
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


BilmProbe = register_command("bilm-probe", DESCRIPTION, "POS and WSD probes of a biLM's layers.", _add_arguments, _run)
