"""Every `allennlp` subcommand of elmo-tasks, one module each (importing registers them)."""

from elmo_tasks.commands import (  # noqa: F401
    bilm_perplexity,
    bilm_probe,
    build_word_vectors,
    coref_conll,
    coref_score,
    elmo_embed,
    export_bilm,
    ner_conll,
    pretrained_models,
    squad_predict,
    squad_score,
    srl_props,
    srl_score,
)
from elmo_tasks.demo import serve_command as elmo_demo  # noqa: F401  (`elmo-demo` lives with the demo, elmo_tasks/demo)
