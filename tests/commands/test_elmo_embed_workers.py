"""`elmo-embed --workers`: forked worker processes write the same file as one process."""

import h5py
import numpy as np
import pytest

from elmo_tasks.bilm.workers import ordered_map

WORDS = "the cat sat on a mat while dogs ran past quickly and birds sang over green hills".split()  # noqa: SIM905


def _sentences(count: int):
    # lengths 1..17 in a shuffled order, some repeated, so length-sorted chunks reorder them
    return [" ".join(WORDS[: 1 + (i * 7) % len(WORDS)]) for i in range(count)]


def _datasets(path):
    with h5py.File(path, "r") as handle:
        return {name: handle[name][()] for name in handle}


def test_two_and_three_workers_write_what_one_process_writes(run, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(_sentences(45)) + "\n", encoding="utf-8")
    outputs = {}
    for workers in (1, 2, 3):
        run(source, tmp_path / f"out{workers}.hdf5", "--batch-size", "4", "--workers", workers)
        outputs[workers] = _datasets(tmp_path / f"out{workers}.hdf5")
    assert len(outputs[1]) == 45 + 1  # one dataset per line plus sentence_to_index
    for workers in (2, 3):
        assert outputs[workers].keys() == outputs[1].keys()
        for name, value in outputs[1].items():
            if name == "sentence_to_index":
                assert outputs[workers][name][0] == value[0]
            else:
                np.testing.assert_array_equal(outputs[workers][name], value)


def test_workers_refuse_a_stateful_biLM_and_threads_in_each_worker(run, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(_sentences(10)) + "\n", encoding="utf-8")
    done = run(source, tmp_path / "a.hdf5", "--stateful", "--workers", "2", check=False)
    assert done.returncode == 2 and "stateful biLM embeds in one process" in done.stderr
    done = run(source, tmp_path / "b.hdf5", "--workers", "2", "--threads", "2", check=False)
    assert done.returncode == 2 and "each worker process runs one thread" in done.stderr
    assert not (tmp_path / "a.hdf5").exists() and not (tmp_path / "b.hdf5").exists()


def _square_or_fail(number: int) -> int:
    if number == 5:
        raise ValueError("five is not allowed")
    return number * number


def test_ordered_map_keeps_order_and_raises_a_workers_error():
    assert list(ordered_map(_square_or_fail, range(5), workers=3, in_flight_per_worker=1)) == [0, 1, 4, 9, 16]
    with pytest.raises(ValueError, match="five is not allowed"):
        list(ordered_map(_square_or_fail, range(10), workers=2))
