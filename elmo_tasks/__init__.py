"""elmo-tasks: ELMo as a fast, first-class AllenNLP component (see README.md).

Importing the package is cheap on purpose: ``elmo_tasks.bilm`` (plain PyTorch) must not pull in
AllenNLP, spaCy or fairscale. Everything AllenNLP needs to know about (models, readers,
predictors, commands) is registered by :mod:`elmo_tasks.plugin`, which ``.allennlp_plugins``
names, so every ``allennlp`` command run from the repository root imports it. Importing registers
names and does nothing else: the environment defaults the experiments read, the thread policy and
the rest of a command's setup happen where a command starts (:mod:`elmo_tasks.command_start`).
Python code that builds models from configs itself does ``import elmo_tasks.plugin`` and calls
``elmo_tasks.command_start.start_command()`` first.
"""
