"""The raw-text biLM reader: instances, text formats, splitting, and errors on bad files."""

import pytest
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import WhitespaceTokenizer

from elmo_tasks.tasks.lm.reader import BilmRawTextReader
from elmo_tasks.tasks.lm.text_source import RawTextError
from tests.conftest import FIXTURES_ROOT

LM_FIXTURES = FIXTURES_ROOT / "lm"


def _sentences(reader, path) -> list:
    return [[t.text for t in inst["tokens"].tokens] for inst in reader.read(str(path))]


def test_fixture_one_sentence_per_line_with_boundary_targets():
    instances = list(BilmRawTextReader().read(str(LM_FIXTURES / "train.txt")))
    assert len(instances) == 400
    first = instances[0]
    words = [t.text for t in first["tokens"].tokens]
    assert words[:3] == ["My", "sister", "found"] and words[-1] == "."
    targets = [t.text for t in first["targets"].tokens]
    assert targets == ["<S>"] + words + ["</S>"]


def test_running_text_splits_paragraphs_into_sentences(tmp_path):
    path = tmp_path / "news.txt"
    path.write_text("  The cat sat. It was\n  happy! Was it?\n\nA new\n paragraph here\n", encoding="utf-8")
    got = _sentences(BilmRawTextReader(text_format="running"), path)
    assert got == [
        ["The", "cat", "sat", "."],
        ["It", "was", "happy", "!"],
        ["Was", "it", "?"],
        ["A", "new", "paragraph", "here"],
    ]
    # the same file read line by line keeps the wrapped lines as sentences
    assert len(_sentences(BilmRawTextReader(), path)) == 4


def test_long_sentences_are_cut_into_pieces(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text(" ".join(f"w{i}" for i in range(25)) + "\nshort line\n", encoding="utf-8")
    reader = BilmRawTextReader(tokenizer=WhitespaceTokenizer(), max_sentence_length=10)
    assert [len(s) for s in _sentences(reader, path)] == [10, 10, 5, 2]


def test_wikiextractor_markup_crlf_and_entities(tmp_path):
    path = tmp_path / "wiki.txt"
    path.write_bytes(b'<doc id="1" title="Cats">\r\nCats\r\n\r\nCats &amp; dogs play.\r\n</doc>\r\n')
    reader = BilmRawTextReader(tokenizer=WhitespaceTokenizer(), drop_wikiextractor_markup=True, unescape_html=True)
    assert _sentences(reader, path) == [["Cats", "&", "dogs", "play."]]


@pytest.mark.parametrize("content", [b"", b"\n  \n\n"])
def test_empty_file_error_names_the_file(tmp_path, content):
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    with pytest.raises(RawTextError, match=r"empty\.txt contains no text"):
        list(BilmRawTextReader().read(str(path)))


def test_binary_file_error_names_file_and_line(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"fine text\nmore text\n\x00\x01\x02binary\n")
    with pytest.raises(RawTextError, match=r"model\.bin, line 3: NUL byte.*binary file"):
        list(BilmRawTextReader().read(str(path)))


def test_undecodable_file_error_says_how_to_fix(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("ok\ncaf\u00e9 au lait\n".encode("latin-1"))
    with pytest.raises(RawTextError, match=r"latin1\.txt, line 2: not valid UTF-8.*iconv"):
        list(BilmRawTextReader().read(str(path)))


def test_directory_and_missing_paths(tmp_path):
    (tmp_path / "a.txt").write_text("one two\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("three\n", encoding="utf-8")
    assert _sentences(BilmRawTextReader(), tmp_path) == [["one", "two"], ["three"]]
    with pytest.raises(ConfigurationError, match="no file matches"):
        list(BilmRawTextReader().read(str(tmp_path / "nothing_*.txt")))


def test_fallback_encoding_decodes_latin1_lines_and_counts_them(tmp_path, caplog):
    path = tmp_path / "mixed.txt"
    path.write_bytes("Heated to 460°C today .\n".encode("utf-8") + b"Cooled to 20\xb0C later .\n")
    reader = BilmRawTextReader(tokenizer=WhitespaceTokenizer(), fallback_encoding="cp1252")
    with caplog.at_level("INFO"):
        got = _sentences(reader, path)
    assert got == [["Heated", "to", "460°C", "today", "."], ["Cooled", "to", "20°C", "later", "."]]
    assert "mixed.txt, line 2: not UTF-8, decoded as cp1252" in caplog.text
    assert "1 not UTF-8 and decoded with the fallback encoding" in caplog.text


def test_unknown_fallback_encoding_is_a_configuration_error():
    with pytest.raises(Exception, match="fallback_encoding 'no-such-codec'"):
        BilmRawTextReader(fallback_encoding="no-such-codec")


def test_running_text_without_blank_lines_is_cut_at_line_ends(tmp_path):
    # e.g. a corpus with one sentence per line: no blank line for 60,000 characters must neither
    # reach spaCy's max_length nor lose or split a line.
    line = "word " * 19 + "end ."
    path = tmp_path / "brown.txt"
    path.write_text("\n".join([line] * 600) + "\n", encoding="utf-8")
    seen = []

    class Recording(WhitespaceTokenizer):
        def tokenize(self, text):
            seen.append(len(text))
            return super().tokenize(text)

    got = _sentences(BilmRawTextReader(tokenizer=Recording(), text_format="running"), path)
    assert len(got) == 600 and all(s == line.split() for s in got)
    assert len(seen) == 4 and max(seen) < 20_100  # 199 lines of 101 characters reach 20,000
