"""A fallback that guesses which words of a raw sentence are verbs, with nothing downloaded.

spaCy's blank English pipeline has no POS tagger and the project ships no trained tagger yet, so
the ``srl`` predictor uses this when the input gives no ``verbs``: a word is taken as a verb when
it is one of a list of frequent English verb forms, or ends in ``-ed`` / ``-ing`` and does not
follow a determiner (``the running water``). Auxiliaries and modals (``is``, ``has``, ``will``)
are not predicates of their own here, as in CoNLL-2005. It misses many verbs (``sells``,
``put``) and takes some adjectives (``interested``): pass ``verbs`` for exact predicates.
"""

from typing import List

METHOD = "heuristic: a list of frequent verb forms plus -ed/-ing words not after a determiner"

_DETERMINERS = frozenset("a an the this that these those my your his her its our their some any no every each".split())
_AUXILIARIES = frozenset(
    "be am is are was were been being have has had having do does did will would shall should can could may might "
    "must 's 're 've 'd 'll 'm".split()
)
_NOT_VERBS = frozenset(
    "during morning evening nothing something anything everything thing king ring spring string "
    "ceiling building wedding bed red need seed feed speed hundred".split()
)
_VERB_FORMS = frozenset(
    """say says said go goes went gone get gets got gotten make makes made know knows knew known think thinks
    thought take takes took taken see sees saw seen come comes came give gives gave given find finds found tell
    tells told become becomes became leave leaves left feel feels felt bring brings brought begin begins began
    begun keep keeps kept hold holds held write writes wrote written stand stands stood hear hears heard let
    lets mean means meant set sets meet meets met run runs ran pay pays paid sit sits sat speak speaks spoke
    spoken lie lies lay lead leads led grow grows grew grown lose loses lost fall falls fell fallen send sends
    sent build builds built understand understands understood draw draws drew drawn break breaks broke broken
    spend spends spent cut cuts rise rises rose risen drive drives drove driven buy buys bought wear wears wore
    worn choose chooses chose chosen seek seeks sought throw throws threw thrown catch catches caught deal deals
    dealt win wins won sell sells sold eat eats ate eaten teach teaches taught fight fights fought sing sings sang
    sung sleep sleeps slept fly flies flew flown forget forgets forgot forgotten want wants like likes use uses
    try tries help helps show shows ask asks call calls move moves live lives believe believes happen happens
    provide provides include includes continue continues change changes play plays open opens close closes
    expect expects plan plans agree agrees report reports reach reaches""".split()
)


def guess_verbs(words: List[str]) -> List[int]:
    """Indices of the words taken as verbs (see the module docstring for the rules)."""
    found = []
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in _AUXILIARIES or lower in _NOT_VERBS or not lower.isalpha():
            continue
        if index > 0 and words[index - 1].lower() in _DETERMINERS:
            continue
        if lower in _VERB_FORMS or (len(lower) > 4 and lower.endswith(("ed", "ing"))):
            found.append(index)
    return found
