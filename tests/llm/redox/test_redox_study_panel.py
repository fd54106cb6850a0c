"""Study views and the panel: the live view agrees with the loaders' own orders, bad input reaches the status
line naming the parameter, every view is memoised in study and cleared by clear_caches.

References: the plan and baseline functions called directly; RedoxConfig's refusal text.
"""

from __future__ import annotations

import numpy as np

from workbench.llm.redox import study
from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.redox import epoch_seed, plan_local, request_stream


def values(**kw) -> dict:
    return {**RedoxConfig(records=311, record_kb=4.0, chunk_kb=64.0, resident=3, workers=3, batch=16).__dict__, **kw}


def test_order_view_is_the_loaders_orders() -> None:
    view = study.order_view(values())
    assert set(view.orders) == set(study.ORDER_NAMES)
    for order in view.orders.values():
        assert sorted(order.tolist()) == list(range(311))
    plan = plan_local(request_stream(311, 0, 0), view.chunk_of, 3, epoch_seed(0, 0) ^ 0x5EED)
    assert np.array_equal(view.orders["redox"], plan.order)
    assert sum(view.owned) == 311 and len(view.owned) == 3
    every = study.order_view(values(resident=10_000))
    assert np.array_equal(every.orders["redox"], every.orders["random-sampler"])  # K = all: a full shuffle
    assert every.redirected_share == 0


def test_study_memoises_and_clears() -> None:
    a = study.order_view(values())
    assert study.order_view(values()) is a
    study.clear_caches()
    assert study.order_view(values()) is not a


def test_panel_shows_bad_input_in_its_status_line() -> None:
    from widgets.llm.redox import RedoxPanel

    panel = RedoxPanel(records=250, resident=2)
    assert panel.error is None
    before = panel.figures[0].to_plotly_json()["data"]
    panel.set(record_kb=110.0, chunk_kb=64.0)
    assert panel.error is not None and "chunk_kb=64 is smaller than a record can be" in panel.status.value
    assert panel.figures[0].to_plotly_json()["data"][0]["x"] is not None and before
    panel.set(record_kb=4.0)
    assert panel.error is None


def test_randomness_sweep_and_markdown() -> None:
    rows = study.randomness_sweep(values(), (1, 10_000))
    full = [r for r in rows if r["resident"] == 10_000 and r["order"] in ("redox", "random-sampler")]
    assert full[0]["label_kl"] == full[1]["label_kl"]
    text = study.markdown_table(rows)
    assert text.count("\n") == len(rows) + 1 and "| resident | order |" in text
