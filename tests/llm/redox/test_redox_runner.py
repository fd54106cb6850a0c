"""``workbench run redox``: the JSON of the issue, the modes (check, generate, pack), bad input as one line and
exit status 2 (K = 0, a chunk smaller than a record, a missing or truncated chunk file, an index that disagrees
with the chunks), and no data written into a folder the command did not create (issue 25's data loss).

Reference: the issue's schema; the files' sizes; the SHA-256 of every file in a refused folder, before and after;
the error text names the parameter or the file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.dataset import INDEX_NAME, RedoxStore
from workbench.llm.redox.learning import train
from workbench.llm.redox.runner import run

pytestmark = pytest.mark.slow

SMALL = ["--records", "131", "--record-kb", "3", "--chunk-kb", "32", "--resident", "2", "--batch", "8"]


def test_check_json_has_the_issue_schema(tmp_path: Path, capsys) -> None:
    root = str(tmp_path / "new")  # a folder the command creates
    assert main(["run", "redox", "--mode", "check", *SMALL, "--workers", "3", "--root", root, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exactly_once"] is True and out["chunks_read_once"] is True
    names = [r["name"] for r in out["loaders"]]
    assert names == [
        "redox",
        "block-shuffle",
        "random-files",
        "random-files-workers",
        "random-packed",
        "random-packed-os",
        "random-packed-direct",
        "ffcv-quasi-random",
        "sequential",
    ]
    for r in out["loaders"]:
        for key in (
            "name",
            "bytes_read",
            "bytes_served",
            "read_amplification",
            "items_per_s",
            "label_kl",
            "disk_order_spearman",
        ):
            assert key in r
        assert r["bytes_served"] == out["dataset"]["total_bytes"]
    assert out["distributed"]["processes"] == 3 and out["distributed"]["exactly_once"]
    assert out["model"]["label"] == "MODEL"


def test_generate_then_pack(tmp_path: Path, capsys) -> None:
    assert main(["run", "redox", "--mode", "generate", *SMALL, "--root", str(tmp_path / "g"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"]["records"] == 131 and out["loaders"] == []
    src = tmp_path / "src" / "a"
    src.mkdir(parents=True)
    for k in range(5):
        (src / f"{k}.txt").write_text("x" * (10 + k))
    assert (
        main(
            [
                "run",
                "redox",
                "--mode",
                "pack",
                "--source",
                str(tmp_path / "src"),
                "--chunk-kb",
                "1",
                "--root",
                str(tmp_path / "p"),
            ]
        )
        == 0
    )
    assert RedoxStore(tmp_path / "p").n == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--resident", "0"], "resident=0 is out of range: valid range is 1..1_000_000 (chunks)"),
        (["--record-kb", "64", "--chunk-kb", "128"], "chunk_kb=128 is smaller than a record can be"),
        (["--workers", "0"], "workers=0 is out of range"),
        (["--mode", "pack"], "source='' is empty"),
    ],
)
def test_bad_parameters_exit_2_with_one_line(args, message, capsys) -> None:
    assert main(["run", "redox", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def _checksums(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_folder_without_an_index_is_refused_and_left_unchanged(tmp_path: Path, capsys) -> None:
    """The issue's case: DIR holds a dataset whose index.npz is gone (and other files); ``--mode check --root DIR``
    used to generate a different dataset into it, overwriting c000000.chunk. Now: one line naming --root, exit 2,
    every file's SHA-256 unchanged. An empty folder given by the user is refused the same way; ``--generate``
    writes into it; a folder the command creates is written without it."""
    root = tmp_path / "data"
    assert main(["run", "redox", "--mode", "generate", *SMALL, "--seed", "4", "--root", str(root)]) == 0
    (root / INDEX_NAME).unlink()
    (root / "notes.txt").write_text("mine")
    before = _checksums(root)
    capsys.readouterr()
    for mode in ("check", "generate"):
        assert main(["run", "redox", "--mode", mode, "--root", str(root)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"root='{root}' already exists and holds no dataset index" in err[0], err
        assert "--generate" in err[0]
        assert _checksums(root) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["run", "redox", *SMALL, "--root", str(empty)]) == 2
    assert "root=" in capsys.readouterr().err and list(empty.iterdir()) == []
    assert main(["run", "redox", "--mode", "generate", *SMALL, "--root", str(empty), "--generate"]) == 0
    assert RedoxStore(empty).n == 131
    # a folder that holds a dataset: check reads it as it is; generate into it needs --generate too
    assert main(["run", "redox", "--mode", "generate", *SMALL, "--root", str(empty)]) == 2
    assert "already exists and holds a dataset" in capsys.readouterr().err


def test_damaged_datasets_exit_2_naming_the_file(tmp_path: Path, capsys) -> None:
    tmp_path = tmp_path / "d"
    assert main(["run", "redox", "--mode", "generate", *SMALL, "--root", str(tmp_path)]) == 0
    capsys.readouterr()
    chunk = tmp_path / "chunks" / "c000001.chunk"
    data = chunk.read_bytes()
    chunk.write_bytes(data[: len(data) // 2])
    assert main(["run", "redox", *SMALL, "--root", str(tmp_path)]) == 2
    assert f"chunk file {chunk} is truncated" in capsys.readouterr().err
    chunk.unlink()
    assert main(["run", "redox", *SMALL, "--root", str(tmp_path)]) == 2
    assert f"chunk file {chunk} listed in" in capsys.readouterr().err
    chunk.write_bytes(data)
    with np.load(tmp_path / INDEX_NAME) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["offset"] = arrays["offset"] + 1
    np.savez(tmp_path / INDEX_NAME, **arrays)
    assert main(["run", "redox", *SMALL, "--root", str(tmp_path)]) == 2
    assert "disagrees with its chunks" in capsys.readouterr().err


def test_run_reports_progress_and_reuses_the_cached_dataset() -> None:
    seen = []
    config = RedoxConfig(records=97, record_kb=2.0, chunk_kb=16.0, resident=1, workers=1, batch=4)
    first = run(config, progress=lambda done, total, what: seen.append((done, total, what)))
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1]
    again = run(config)
    assert again.dataset.reused and again.exactly_once and first.exactly_once


def test_learning_through_the_files_matches_the_array_path(tmp_path: Path) -> None:
    """The digits served by RedoxDataset from real files, in the sampler's order, are the training arrays in
    learning.epoch_order's order (so the learning runs use the loader's real order and data)."""
    import torch
    from torch.utils.data import DataLoader

    from workbench.llm.redox.dataset import generate
    from workbench.llm.redox.learning import chunk_table, digits_split, epoch_order
    from workbench.llm.redox.redox import RedoxDataset, RedoxSampler

    x, y, _, _ = digits_split()
    generate(
        tmp_path,
        records=0,
        record_bytes=0,
        chunk_bytes=64 * (64 * 4 + 16),
        payloads=[row.tobytes() for row in x],
        labels=y.tolist(),
    )
    store = RedoxStore(tmp_path)
    assert np.array_equal(store.chunk, chunk_table(len(x), 64))
    sampler = RedoxSampler(store, resident=3, seed=5)
    ds = RedoxDataset(
        store, sampler, decode=lambda i, label, p: (torch.frombuffer(bytearray(p), dtype=torch.float32), label)
    )
    feats, labels = zip(*[(f, lab) for f, lab in DataLoader(ds, sampler=sampler, batch_size=64)])
    order = epoch_order("redox", len(x), store.chunk, resident=3, seed=5, epoch=0)
    assert torch.equal(torch.cat(feats), torch.from_numpy(x[order])) and np.array_equal(torch.cat(labels), y[order])
    ds.close()
    curve = train("redox", resident=3, seed=0, epochs=3)
    assert curve.accuracy[-1] > 0.8
