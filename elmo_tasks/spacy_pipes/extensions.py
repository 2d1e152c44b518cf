"""The ``doc._`` / ``token._`` attributes the components set, registered once.

Registered when this module is imported, which spaCy does for every pipeline it builds (the package's
``spacy_factories`` entry points), so Docs saved with these attributes (``DocBin``, ``Doc.to_bytes``)
read back in any process of an environment with elmo-tasks installed. Every value is plain data
(numpy arrays, lists, dicts, numbers, strings), so it travels with the Doc: ``nlp.pipe(n_process=...)``
sends Docs between processes as bytes.
"""

from typing import Any, Optional

from spacy.tokens import Doc, Token

#: ``doc._.elmo_layers``: every biLM layer of every token, ``(layers, len(doc), dim)`` float32 (the
#: ``elmo`` component; whitespace tokens are zero).
LAYERS = "elmo_layers"
#: ``doc._.elmo_srl``: the semantic-role frames of ``elmo_srl``, one dict per predicate.
SRL_FRAMES = "elmo_srl"
#: ``doc._.elmo_coref``: the coreference clusters of ``elmo_coref``, lists of ``[start, end)`` token spans.
COREF_CLUSTERS = "elmo_coref"


def token_layers(token: Token) -> Optional[Any]:
    """``token._.elmo_layers``: the token's column of ``doc._.elmo_layers``, ``(layers, dim)``, or None."""
    layers = token.doc._.get(LAYERS)
    return None if layers is None else layers[:, token.i]


def install_extensions() -> None:
    """Registers the attributes (nothing changes when they are already there)."""
    for name in (LAYERS, SRL_FRAMES, COREF_CLUSTERS):
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)
    if not Token.has_extension(LAYERS):
        Token.set_extension(LAYERS, getter=token_layers)


install_extensions()
