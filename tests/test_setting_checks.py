import pytest
from allennlp.common.checks import ConfigurationError

from elmo_tasks.setting_checks import positive_count, positive_setting
from elmo_tasks.tasks.coref.reader import Conll2012CorefReader
from elmo_tasks.tasks.squad.reader import SquadV1Reader


def test_a_positive_integer_passes_and_none_only_where_optional():
    assert positive_count(3, "max_span_width") == 3
    assert positive_setting(None, "max_sentences", optional=True) is None
    with pytest.raises(ConfigurationError, match=r"^max_sentences must be a positive integer, got None$"):
        positive_setting(None, "max_sentences")


@pytest.mark.parametrize("value", [0, -2, 2.5, True, "3"])
def test_anything_else_is_refused_naming_the_owner_setting_and_value(value):
    with pytest.raises(ConfigurationError) as refused:
        positive_setting(value, "num_samples", "the sampled softmax", optional=True)
    assert str(refused.value) == (
        f"the sampled softmax: num_samples must be a positive integer (or null), got {value!r}"
    )


def test_readers_refuse_a_zero_count_in_their_config():
    with pytest.raises(ConfigurationError, match="max_span_width must be a positive integer, got 0"):
        Conll2012CorefReader(max_span_width=0)
    with pytest.raises(
        ConfigurationError, match=r"passage_length_limit must be a positive integer \(or null\), got -1"
    ):
        SquadV1Reader(passage_length_limit=-1)
