"""Task orders. Reference: the formula of FlexTrain's GreedySnakeBlockScheduler (npz7yyk/FlexTrain,
flextrain/scheduler.py), re-derived here as properties: every (unit, micro-batch) pair once per pass, the snake
(the last micro-batch of a unit is the first of the next), the fused last unit, and ZeRO-Infinity's order."""

import pytest

from workbench.llm.greedysnake.schedule import horizontal, tasks_for, vertical


@pytest.mark.parametrize(("U", "M"), [(2, 1), (3, 4), (5, 3), (7, 5)])
def test_vertical_is_a_snake_with_fused_last_unit(U, M):
    tasks = vertical(U, M)
    assert len(tasks) == M * (2 * U - 1)
    fwd = [t for t in tasks if t.kind == "fwd"]
    assert len(fwd) == M * (U - 1) and all(t.unit < U - 1 for t in fwd)
    assert [t.unit for t in tasks if t.kind == "last"] == [U - 1] * M
    for kind in ("fwd", "bwd"):
        pairs = {(t.unit, t.mb) for t in tasks if t.kind == kind}
        assert pairs == {(u, m) for u in range(U - 1) for m in range(M)}
    for prev, nxt in zip(tasks, tasks[1:], strict=False):
        if prev.unit != nxt.unit:  # a unit boundary: the snake continues with the same micro-batch
            assert prev.mb == nxt.mb
    for t in tasks:  # odd units run the micro-batches backwards
        order = [x.mb for x in tasks if x.unit == t.unit and x.kind == t.kind]
        assert order == (list(range(M)) if t.unit % 2 == 0 else list(range(M - 1, -1, -1)))


def test_vertical_matches_the_authors_formula_literally():
    U, M = 4, 3
    expected = []
    for t in range(M * (2 * U - 1)):
        u = t // M
        if u >= U - 1:
            u = 2 * U - 2 - u
        m = t % M if u % 2 == 0 else M - 1 - t % M
        expected.append((u, m))
    assert [(t.unit, t.mb) for t in vertical(U, M)] == expected


def test_horizontal_runs_each_micro_batch_through_and_back():
    tasks = horizontal(4, 2)
    assert [(t.kind, t.unit, t.mb) for t in tasks[:7]] == [
        ("fwd", 0, 0), ("fwd", 1, 0), ("fwd", 2, 0), ("last", 3, 0), ("bwd", 2, 0), ("bwd", 1, 0), ("bwd", 0, 0)
    ]  # fmt: skip
    assert tasks[7].mb == 1


@pytest.mark.parametrize(("args", "word"), [((0, 2), "units=0"), ((3, 0), "micro_batches=0")])
def test_bad_sizes_name_the_parameter(args, word):
    with pytest.raises(ValueError, match=word):
        vertical(*args)
    with pytest.raises(ValueError, match="schedule='diagonal'"):
        tasks_for("diagonal", 3, 2)
