"""spaCy components: ELMo vectors and the task models' predictions on spaCy Docs (docs/SPACY.md).

========================  =================================================  ==============================
``nlp.add_pipe(...)``     sets                                               module
========================  =================================================  ==============================
``"elmo"``                ``token.vector``, ``doc.tensor``, ``doc._.elmo_layers``  elmo.py
``"elmo_ner"``            ``doc.ents``                                       ner.py
``"elmo_srl"``            ``doc.spans["srl_K"]``, ``doc._.elmo_srl``         srl.py
``"elmo_coref"``          ``doc.spans["coref"]``, ``["coref_K"]``, ``doc._.elmo_coref``  coref.py
``"elmo_sst"``            ``doc.cats``                                       sst.py
========================  =================================================  ==============================

spaCy finds the factories through the package's ``spacy_factories`` entry points (setup.cfg), so no
import of ours is needed first, and ``spacy.load`` of a saved pipeline builds them again. spaCy imports
these modules whenever it builds a pipeline, so they import nothing heavy at the top: torch, AllenNLP
and the models load when a component is created.
"""

from elmo_tasks.spacy_pipes.errors import DocTooLong, ElmoPipeError
from elmo_tasks.spacy_pipes.extensions import install_extensions

__all__ = ["DocTooLong", "ElmoPipeError", "install_extensions"]
