"""Parameters of ``workbench run redox``: the dataset on disk, the loader (K, workers), the check, the model."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.llm.redox.dataset import LAYOUTS
from workbench.llm.redox.sizes import DISTRIBUTIONS, max_record_bytes

MODES = ("check", "generate", "pack")
STORAGE = ("this-machine", "hdd", "sata-ssd", "nvme-ssd", "network-fs")
#: real runs fork one process per rank on this machine
MAX_PROCESSES = 16


@dataclass(frozen=True, kw_only=True)
class RedoxConfig(Config):
    """Redox: generate a dataset of real files, then serve one epoch with Redox (local and distributed) and with
    every baseline, cold, and check that each record is served exactly once."""

    mode: str = param(
        "check",
        choices=MODES,
        help="check: generate (or reuse) the dataset, run every loader and the P-process protocol, check; "
        "generate: only write the dataset (progress bar); pack: pack the files under --source",
    )
    records: int = param(1000, lo=1, hi=100_000_000, unit="records", label="records N", help="records in the dataset")
    record_kb: float = param(
        16.0, lo=0.0625, hi=65_536.0, unit="KB", label="mean record size", help="mean record size (header included)"
    )
    sizes: str = param(
        "imagenet",
        choices=DISTRIBUTIONS,
        label="size distribution",
        help="record sizes: imagenet (log-normal, ImageNet-JPEG-like spread, inferred), uniform (0.5-1.5 x mean), fixed",
    )
    chunk_kb: float = param(
        256.0, lo=1.0, hi=4_194_304.0, unit="KB", label="chunk size", help="chunk size (records never span chunks)"
    )
    resident: int = param(
        4, lo=1, hi=1_000_000, unit="chunks", label="resident chunks K", help="K: chunks held in memory at once"
    )
    workers: int = param(
        2,
        lo=1,
        hi=MAX_PROCESSES,
        unit="processes",
        label="processes P",
        help="P: real processes (gloo) of the distributed protocol, each owning whole chunks",
    )
    batch: int = param(32, lo=1, hi=65_536, unit="records", label="batch size", help="records per batch (per process)")
    classes: int = param(10, lo=1, hi=100_000, unit="classes", help="labels of the generated records")
    layout: str = param(
        "shuffled",
        choices=LAYOUTS,
        help="on-disk order of labels: shuffled once when written (as the paper advises) or class-sorted (the pitfall)",
    )
    cold: bool = param(True, help="drop the page cache per file before and after reads (posix_fadvise DONTNEED)")
    storage: str = param(
        "hdd",
        choices=STORAGE,
        label="storage kind (model)",
        help="storage the model carries the measured run to (this-machine: calibrated on this run's reads)",
    )
    root: str = param(
        "",
        help="dataset folder: one holding a dataset is read as it is; a new one is created and the dataset written "
        "there; an existing folder without a dataset index is refused unless --generate (default: a cache folder "
        "named after the dataset parameters)",
    )
    generate: bool = param(
        False,
        help="write the dataset into --root even though that folder exists (its records/, chunks/ and index are "
        "overwritten); without it, only a folder this command creates is written to",
    )
    source: str = param("", help="pack mode: the folder of files to pack (labels from the top folder names)")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of the sizes, labels, payloads and orders")
    timeout_s: float = param(
        300.0,
        lo=1.0,
        hi=86_400.0,
        unit="s",
        help="wall-clock limit of the P-process run and of each wait for a DataLoader worker's batch",
    )

    def check_combination(self) -> None:
        biggest = max_record_bytes(self.record_kb * 1024, self.sizes)
        if self.mode != "pack" and biggest > self.chunk_kb * 1024:
            raise ValueError(
                f"chunk_kb={self.chunk_kb:g} is smaller than a record can be ({biggest / 1024:.4g} KB: record_kb="
                f"{self.record_kb:g} with sizes={self.sizes!r}): valid range is chunk_kb >= {biggest / 1024:.4g}"
            )
        if self.mode == "pack" and not self.source.strip():
            raise ValueError("source='' is empty: pack mode needs --source FOLDER (the files to pack)")
