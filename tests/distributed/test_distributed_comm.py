"""Tests of ``workbench.distributed.Comm``: transfers are correct and every byte is counted.

Reference: hand-computed payloads (numel * element_size per message; nothing for a rank's own slice) and the
data expected after each transfer.
"""

from __future__ import annotations

import pytest
import torch

from workbench.distributed import run_workers

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow


def _ring_p2p(rank: int, world: int, comm, dtype: torch.dtype) -> dict:
    mine = torch.full((3, 5), float(rank), dtype=dtype)
    got = torch.empty_like(mine)
    pending = comm.p2p([(mine, (rank + 1) % world)], [(got, (rank - 1) % world)], tag=3)
    pending.wait_recv(0)
    pending.wait()
    return {
        "got": got,
        "sent": comm.bytes_sent,
        "recv": comm.bytes_recv,
        "msgs": comm.counter.messages_sent,
        "to": dict(comm.counter.sent_to),
    }


@pytest.mark.parametrize("world", [2, 3])
@pytest.mark.parametrize("dtype, size", [(torch.float64, 8), (torch.float32, 4)])
def test_p2p_moves_data_and_counts_bytes(world: int, dtype: torch.dtype, size: int) -> None:
    for rank, res in enumerate(run_workers(_ring_p2p, world, dtype)):
        assert torch.equal(res["got"], torch.full((3, 5), float((rank - 1) % world), dtype=dtype))
        assert res["sent"] == res["recv"] == 15 * size
        assert res["msgs"] == 1
        assert res["to"] == {(rank + 1) % world: 15 * size}


def _all_to_all(rank: int, world: int, comm) -> dict:
    send = torch.arange(world * 4, dtype=torch.float64).reshape(world, 4) + 100 * rank
    out = torch.empty_like(send)
    comm.all_to_all_single(out, send)
    gathered = torch.empty(world, 2)
    comm.all_gather(gathered, torch.full((2,), float(rank)))
    return {"out": out, "gathered": gathered, "sent": comm.bytes_sent, "recv": comm.bytes_recv}


@pytest.mark.parametrize("world", [1, 2, 4])
def test_collectives_count_all_but_own_slice(world: int) -> None:
    for rank, res in enumerate(run_workers(_all_to_all, world)):
        expected = torch.stack([torch.arange(4, dtype=torch.float64) + 4 * rank + 100 * m for m in range(world)])
        assert torch.equal(res["out"], expected)
        assert torch.equal(res["gathered"], torch.arange(world, dtype=torch.float32)[:, None].expand(world, 2))
        assert res["sent"] == res["recv"] == (world - 1) * 4 * 8 + (world - 1) * 2 * 4


def _split(rank: int, world: int, comm) -> dict:
    groups = comm.split([[0, 1], [2, 3]])
    again = comm.split([[0, 1], [2, 3]])
    send = torch.full((2, 3), float(rank))
    out = torch.empty_like(send)
    groups.all_to_all_single(out, send)
    view = comm.split([[0, 2], [1, 3]], collective=False)
    got = torch.empty(1)
    view.p2p([(torch.tensor([float(rank)]), 1 - view.rank)], [(got, 1 - view.rank)]).wait()
    return {
        "members": groups.ranks,
        "same": again is groups,
        "out": out,
        "got": got.item(),
        "sent": comm.bytes_sent,
        "view": view.ranks,
    }


def test_split_shares_the_counter() -> None:
    res = run_workers(_split, 4)
    for rank, r in enumerate(res):
        assert r["members"] == ((0, 1) if rank < 2 else (2, 3))
        assert r["same"]
        partner = rank ^ 1
        assert torch.equal(r["out"], torch.tensor([[float(min(rank, partner))] * 3, [float(max(rank, partner))] * 3]))
        assert r["view"] == ((0, 2) if rank % 2 == 0 else (1, 3))
        assert r["got"] == float((rank + 2) % 4)
        assert r["sent"] == 3 * 4 + 4  # one all-to-all slice + one p2p float, on the parent's counter


def _bad_peer(rank: int, world: int, comm) -> None:
    comm.p2p([(torch.zeros(1), rank)], [])


def test_send_to_self_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"peer=(\d) is invalid for member \1 of a group of size 2"):
        run_workers(_bad_peer, 2)


def _bad_split(rank: int, world: int, comm) -> None:
    comm.split([[0, 1], [1]])


def test_split_must_be_a_partition() -> None:
    with pytest.raises(ValueError, match=r"partition=.* must cover members 0..1 exactly once"):
        run_workers(_bad_split, 2)
