"""`allennlp <our command> --help`: every default shown once, in one form, and the one the command uses."""

import argparse

import pytest
from allennlp.commands import ArgumentParserWithDefaults
from allennlp.commands.subcommand import Subcommand

import elmo_tasks.plugin  # noqa: F401  (registers the commands)
from elmo_tasks.bilm.embed import add_arguments
from elmo_tasks.cli_options import add_option, option_dest

OUR_COMMANDS = [
    "bilm-perplexity",
    "bilm-probe",
    "build-word-vectors",
    "coref-conll",
    "coref-score",
    "elmo-embed",
    "export-bilm",
    "ner-conll",
    "squad-predict",
    "squad-score",
    "srl-props",
    "srl-score",
]


def _subparser(name: str) -> argparse.ArgumentParser:
    """The command's parser as `allennlp` builds it (AllenNLP's parser, which annotates defaults itself)."""
    subparsers = ArgumentParserWithDefaults(prog="allennlp").add_subparsers()
    return Subcommand.by_name(name)().add_subparser(subparsers)


@pytest.mark.parametrize("name", OUR_COMMANDS)
def test_every_default_is_shown_once_in_our_form(name):
    parser = _subparser(name)
    assert "(default = " not in parser.format_help()  # AllenNLP's own annotation: never added to ours
    for action in parser._actions:
        if action.default == argparse.SUPPRESS:  # --help
            continue
        assert (action.help or "").count("default") <= 1, (name, action.option_strings, action.help)
        value = parser.get_default(action.dest)
        if value not in (None, False, "") and action.dest != "func":
            assert "(default: " in action.help, (name, action.option_strings)


def test_the_shown_default_is_the_default_used():
    parser = _subparser("srl-props")
    args = parser.parse_args(["model.tar.gz", "input.txt", "output.props"])
    assert args.batch_size == 64 and args.cuda_device == -1
    assert "predicates per batch (default: 64)" in " ".join(parser.format_help().split())
    assert parser.parse_args(["m", "i", "o", "--batch-size", "8"]).batch_size == 8


def test_plain_argparse_and_allennlp_show_the_same_elmo_embed_help():
    plain = add_arguments(argparse.ArgumentParser(prog="elmo-embed"))
    under_allennlp = _subparser("elmo-embed")
    options = {action.dest: action.help for action in plain._actions}
    assert options == {action.dest: action.help for action in under_allennlp._actions if action.dest in options}
    assert options["batch_size"] == "sentences per batch (default: 64)"
    assert plain.parse_args(["in.txt", "out.hdf5"]).max_tokens == 1000


def test_add_option_names_the_attribute_as_argparse_does():
    parser = argparse.ArgumentParser()
    add_option(parser, "-b", "--batch-size", type=int, default=3, help="rows")
    add_option(parser, "-o", type=str, default="x", help="short only")
    add_option(parser, "--name", dest="chosen", default="y", help="own dest")
    args = parser.parse_args([])
    assert (args.batch_size, args.o, args.chosen) == (3, "x", "y")
    assert option_dest(["-b", "--batch-size"]) == "batch_size"
