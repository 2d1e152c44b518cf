"""``scripts/reproduce.py diagnose``: a few seeded training steps of ESIM on the SNLI fixtures."""

import re

from elmo_tasks.reproduction import main
from elmo_tasks.reproduction.diagnose import run

LINE = re.compile(r"^(\w+) steps 1-10: loss (\d+\.\d{3}) accuracy (\d\.\d{3})$")


def test_diagnose_prints_loss_and_accuracy_every_ten_steps_and_repeats_itself(capsys):
    first = run("baseline", steps=10, batch_size=4)
    assert len(first) == 1 and capsys.readouterr().out.splitlines() == first
    variant, loss, accuracy = LINE.match(first[0]).groups()
    # 40 pairs of 3 classes: the loss starts near ln 3 = 1.099; 40 answers give accuracies in steps of 1/40.
    assert variant == "baseline" and 0.5 < float(loss) < 2.0 and (float(accuracy) * 40) % 1 < 1e-6
    assert run("baseline", steps=10, batch_size=4) == first  # seeded: the same steps give the same numbers
    capsys.readouterr()
    assert main(["diagnose", "input_output", "--steps", "10", "--batch-size", "4"]) == 0
    assert LINE.match(capsys.readouterr().out.strip()).group(1) == "input_output"
