"""SRT tests decode a tiny policy: one torch thread (see workbench.threads), restored after each test."""

import pytest

from workbench.threads import one_thread


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
        yield
