"""``draw_like_allennlp_elmo`` against the installed AllenNLP: the same draws as its ``Elmo`` constructor.

What AllenNLP's constructor draws is no interface of AllenNLP's (see
elmo_tasks/modules/allennlp_random_stream.py), so these tests pin it: an AllenNLP whose ELMo draws
differently fails here instead of changing seeded runs quietly.
"""

import allennlp.version
import torch
from allennlp.modules.elmo import Elmo as AllenNlpElmo

from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.modules.allennlp_random_stream import draw_like_allennlp_elmo
from tests.conftest import FIXTURES_ROOT, WEIGHT_FILE

SKIP_OPTIONS = str(FIXTURES_ROOT / "migrating" / "bilm_tf_options_with_skip.json")


def test_the_installed_allennlp_is_the_one_whose_draws_are_mirrored():
    assert allennlp.version.VERSION == "2.10.1", (
        "allennlp_random_stream.py mirrors AllenNLP 2.10.1's ELMo constructor; check the tests below "
        "(and the modules _ElmoBiLm builds) before moving to another version"
    )


def test_same_draws_as_allennlp_elmo():
    """AllenNLP's ELMo takes only biLMs with skip connections (the published ones): the fixture's, so configured."""
    torch.manual_seed(11)
    AllenNlpElmo(SKIP_OPTIONS, WEIGHT_FILE, 1)
    their_next = torch.rand(4)
    torch.manual_seed(11)
    draw_like_allennlp_elmo(BilmOptions.from_file(SKIP_OPTIONS))
    assert torch.equal(torch.rand(4), their_next)
    torch.manual_seed(11)
    assert not torch.equal(torch.rand(4), their_next)  # the constructor does draw: the test can fail
