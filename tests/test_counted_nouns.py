"""Counts in messages: the noun in the right number, and elmo-embed's note on skipped empty lines."""

from elmo_tasks.bilm.embed import skipped_lines_note
from elmo_tasks.counted_nouns import counted


def test_counted_puts_the_noun_in_the_right_number():
    assert counted(1, "empty line") == "1 empty line"
    assert counted(0, "empty line") == "0 empty lines"
    assert counted(2, "key document is", "key documents are") == "2 key documents are"
    assert counted(1, "key document is", "key documents are") == "1 key document is"
    assert counted(12345, "token", grouped=True) == "12,345 tokens"
    assert counted(1234, "line") == "1234 lines"


def test_skipped_empty_lines_are_named_1_based_and_the_file_lists_them_0_based():
    # indices 2 and 6 are the 3rd and 7th lines of the file, as an editor and the error messages number them
    assert skipped_lines_note([2]) == (
        "; skipped 1 empty line (line 3; 'skipped_empty_lines' lists it 0-based, as the datasets are named)"
    )
    assert skipped_lines_note([2, 6]) == (
        "; skipped 2 empty lines (lines 3, 7; 'skipped_empty_lines' lists them 0-based, as the datasets are named)"
    )
    assert skipped_lines_note(list(range(12))).startswith(
        "; skipped 12 empty lines (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...;"
    )
    assert skipped_lines_note([]) == "; skipped 0 empty lines"
