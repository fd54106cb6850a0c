"""Every `workbench run ...` line of the README's bash blocks runs, in-process, and exits 0.

Reference: the README itself (its "Headless runs" section promises one example per ready technique, each of a
few seconds). Lines of other commands (`workbench lab`, `workbench report`, `torchrun`, `pip`) are not run here.
Each line is split with shlex and passed to ``workbench.cli.main``; an example whose dataset is absent (no
shared data folder, downloads off in tests) is skipped with the CLI's one-line message.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.registry import catalogue, entry

README = Path(__file__).resolve().parents[1] / "README.md"
BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)


def readme_run_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command) of every ``workbench run`` line in the bash blocks of ``text``, trailing comments
    dropped."""
    lines = []
    for block in BASH_BLOCK.finditer(text):
        first = text.count("\n", 0, block.start(1)) + 1
        for offset, raw in enumerate(block.group(1).splitlines()):
            words = shlex.split(raw, comments=True)
            if words[:2] == ["workbench", "run"]:
                lines.append((first + offset, shlex.join(words)))
    return lines


RUN_LINES = readme_run_lines(README.read_text(encoding="utf-8"))


def test_the_parser_finds_run_lines_and_skips_the_rest():
    text = (
        "intro\n```bash\n# a comment\nworkbench run srt --steps 2  # trailing\nworkbench lab\n"
        "torchrun -m x\n```\n```python\nworkbench run not-bash\n```\n"
    )
    assert readme_run_lines(text) == [(4, "workbench run srt --steps 2")]


def test_every_ready_technique_has_a_readme_example():
    shown = {entry(shlex.split(line)[2]).name for _, line in RUN_LINES if len(shlex.split(line)) > 2}
    ready = {e.name for e in catalogue() if e.status == "ready"}
    assert ready - shown == set(), f"techniques without an example in the README: {sorted(ready - shown)}"


@pytest.mark.slow
@pytest.mark.parametrize("line", [line for _, line in RUN_LINES], ids=[f"README:{n}" for n, _ in RUN_LINES])
def test_readme_example_runs(line, capsys):
    try:
        code = main(shlex.split(line)[1:])
    except SystemExit as exc:  # `--help` exits through argparse
        code = exc.code
    out, err = capsys.readouterr()
    if code == 2 and "workbench data fetch" in err:
        pytest.skip(err.strip())
    assert code in (0, None), f"{line}\nexited {code}: {err.strip()[-2000:]}"
    assert out.strip(), f"{line} printed nothing"
