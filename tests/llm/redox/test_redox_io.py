"""The cold reader keeps a bounded number of files open (one file per record must not run out of descriptors)."""

import os

from workbench.llm.redox.io import ColdReader


def test_reader_closes_the_least_recently_used_files(tmp_path):
    paths = []
    for i in range(ColdReader.MAX_OPEN + 40):
        p = tmp_path / f"r{i}.rec"
        p.write_bytes(bytes([i % 256]) * 8)
        paths.append(p)
    before = len(os.listdir("/proc/self/fd"))
    with ColdReader(cold=False) as reader:
        for i, p in enumerate(paths):
            assert reader.read(p, 0, 8) == bytes([i % 256]) * 8
        assert len(reader._fds) == ColdReader.MAX_OPEN
        assert reader.read(paths[-1], 2, 3) == bytes([(len(paths) - 1) % 256]) * 3  # a kept file, reused
        assert reader.read(paths[0], 0, 1) == b"\x00"  # a closed one, reopened
        assert len(os.listdir("/proc/self/fd")) - before <= ColdReader.MAX_OPEN + 1
    assert len(os.listdir("/proc/self/fd")) <= before + 1
    assert reader.ios == len(paths) + 2
