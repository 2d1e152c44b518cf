"""Consume the global random stream exactly as AllenNLP's ELMo constructor does.

AllenNLP's ``Elmo`` randomly initialises its character CNN, highway, projection and LSTM
modules before overwriting them with the pretrained weights. Those draws move the seeded
random stream, so every module a model builds after ELMo (its encoder, its output layer) gets
initial weights that depend on them. To give an unchanged AllenNLP config the same numbers,
the drop-in builds our biLM without touching the stream (``torch.random.fork_rng``) and then
makes the same draws, by building AllenNLP's own modules of the same sizes and discarding them.

No AllenNLP interface says what its constructor draws: which modules ``_ElmoBiLm`` builds, in
which order, is an implementation detail of AllenNLP 2.10.1 (its last release), mirrored here.
The assumption is pinned by tests that fail on an AllenNLP whose draws differ, rather than let
seeded runs change their numbers quietly: ``tests/modules/test_allennlp_random_stream.py`` seeds
the stream, builds AllenNLP's installed ``Elmo`` and compares its next draws with those after
:func:`draw_like_allennlp_elmo`, and checks the installed version;
``tests/modules/test_elmo_module.py`` and ``tests/modules/test_allennlp_dropin.py`` compare the
draws of our ``Elmo`` and of the drop-in embedder with AllenNLP's.
"""

import torch
from allennlp.modules.elmo_lstm import ElmoLstm
from allennlp.modules.highway import Highway

from elmo_tasks.bilm.options import BilmOptions


def draw_like_allennlp_elmo(options: BilmOptions) -> None:
    """Advance the CPU random stream as ``allennlp.modules.elmo._ElmoBiLm(options)`` would."""
    for width, count in options.filters:
        torch.nn.Conv1d(options.char_embedding_dim, count, kernel_size=width, bias=True)
    Highway(options.n_filters, options.n_highway)
    torch.nn.Linear(options.n_filters, options.projection_dim, bias=True)
    ElmoLstm(
        input_size=options.projection_dim,
        hidden_size=options.projection_dim,
        cell_size=options.dim,
        num_layers=options.n_layers,
        memory_cell_clip_value=options.cell_clip,
        state_projection_clip_value=options.proj_clip,
    )
