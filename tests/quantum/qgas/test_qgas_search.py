"""The QGAS loop: invalid and malicious proposals are logged and skipped, the transcript is written and replays
exactly, the local proposer is deterministic and reacts to feedback, and the endpoint proposer talks to a real
HTTP server on 127.0.0.1 that replays recorded answers (no network model is ever called).

References: the recorded answers themselves (what the server sent must be what the transcript logged), a
second run of the same configuration (replay gives identical scores), and the HTTP requests the server saw.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from workbench.quantum.qgas.config import QgasConfig
from workbench.quantum.qgas.proposers import EndpointError, EndpointProposer
from workbench.quantum.qgas.search import load_records, run_search

ANSWERS = json.loads((Path(__file__).parent / "chat_answers.json").read_text())["answers"]
FAST = dict(train_steps=8, restarts=1)


class _ReplayServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 answering with ``answers`` in order."""

    def __init__(self, answers, status: int = 200) -> None:
        self.answers, self.status, self.requests = list(answers), status, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                if outer.status != 200:
                    self.send_response(outer.status)
                    self.end_headers()
                    return
                content = outer.answers[len(outer.requests) - 1]
                reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_endpoint_run_logs_every_answer_skips_invalid_ones_and_replays_exactly(tmp_path, monkeypatch):
    monkeypatch.setenv("QGAS_TEST_KEY", "sk-test")
    out = tmp_path / "t.json"
    with _ReplayServer(ANSWERS) as server:
        config = QgasConfig(
            problem="h2",
            proposer="endpoint",
            iterations=4,
            endpoint_url=server.url,
            endpoint_model="recorded",
            api_key_env="QGAS_TEST_KEY",
            transcript=str(out),
            **FAST,
        )
        run = run_search(config)
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions"] * 4
    assert all(r["auth"] == "Bearer sk-test" and r["body"]["model"] == "recorded" for r in server.requests)
    # the feedback of iteration 0 (its trained error) is in the prompt of iteration 1
    first = run.records[0]
    assert f"{first.energy_error:.3e}" in server.requests[1]["body"]["messages"][1]["content"]
    assert [r.valid for r in run.records] == [True, False, False, True]
    assert [r.reason for r in run.records] == ["", "parse", "include", ""]
    assert run.valid_fraction == 0.5
    logged = json.loads(out.read_text())
    assert [r["raw"] for r in logged["records"]] == ANSWERS  # every raw answer logged verbatim
    assert logged["records"][1]["error"].startswith("proposal: not a valid OpenQASM 3 program: QASM3ParsingError")

    replay = run_search(
        QgasConfig(
            problem="h2", proposer="replay", replay=str(out), iterations=4, transcript=str(tmp_path / "r.json"), **FAST
        )
    )
    for a, b in zip(run.records, replay.records):
        assert (a.raw, a.valid, a.reason, a.energy, a.cnots, a.qasm) == (
            b.raw,
            b.valid,
            b.reason,
            b.energy,
            b.cnots,
            b.qasm,
        )


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_unreachable_endpoint_and_http_errors_are_clear():
    with _ReplayServer([]) as server:
        dead = server.url
    prompt_config = QgasConfig(problem="h2", proposer="endpoint", iterations=1, endpoint_url=dead, **FAST)
    with pytest.raises(EndpointError, match=r"endpoint http://127.0.0.1:\d+/v1/chat/completions is unreachable"):
        run_search(prompt_config)
    with _ReplayServer([], status=401) as server:
        with pytest.raises(EndpointError, match=r"answered HTTP 401"):
            run_search(prompt_config.replace(endpoint_url=server.url))
    with pytest.raises(ValueError, match=r"endpoint_url='ftp://x' is not allowed"):
        EndpointProposer("ftp://x", "m")


def test_local_proposer_is_deterministic_and_reacts_to_feedback(tmp_path):
    config = QgasConfig(problem="lih", iterations=5, transcript=str(tmp_path / "a.json"), **FAST)
    a = run_search(config)
    b = run_search(config.replace(transcript=str(tmp_path / "b.json")))
    assert [r.raw for r in a.records] == [r.raw for r in b.records]
    assert a.records[0].raw.startswith("Proposal (seed")
    # every later proposal mutates the best so far: it names the iteration it came from
    for r in a.records[1:]:
        assert "of iteration" in r.raw
    assert a.valid_fraction == 1.0
    curve = a.best_error_curve()
    assert all(y <= x for x, y in zip(curve, curve[1:]))


def test_budget_refusals_are_logged_and_the_local_proposer_prunes(tmp_path):
    config = QgasConfig(problem="maxcut", iterations=3, max_cnots=2, transcript=str(tmp_path / "c.json"), **FAST)
    run = run_search(config)  # the seed (a cx chain of 4) exceeds 2 CNOTs
    assert run.records[0].valid is False and run.records[0].reason == "cnots"
    assert "cnots=4: valid range is 0..2" in run.records[0].error
    assert run.best is None or run.best.cnots <= 2


@pytest.mark.parametrize("proposer", ["random", "evolutionary"])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_baseline_proposers_run_through_the_same_loop(tmp_path, proposer):
    run = run_search(
        QgasConfig(problem="portfolio", proposer=proposer, iterations=3, transcript=str(tmp_path / "x.json"), **FAST)
    )
    assert len(run.records) == 3 and all(r.proposer == proposer for r in run.records)


def test_replay_errors_name_the_file(tmp_path):
    with pytest.raises(ValueError, match=r"replay='.*missing.json' does not exist"):
        run_search(QgasConfig(problem="h2", proposer="replay", replay=str(tmp_path / "missing.json")))
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ValueError, match=r"is not a QGAS transcript"):
        run_search(QgasConfig(problem="h2", proposer="replay", replay=str(bad)))
    (tmp_path / "one.json").write_text(json.dumps({"records": [{"raw": ANSWERS[0]}]}))
    with pytest.raises(ValueError, match=r"iterations=2 is out of range for the replayed transcript"):
        run_search(
            QgasConfig(
                problem="h2",
                proposer="replay",
                replay=str(tmp_path / "one.json"),
                iterations=2,
                transcript=str(tmp_path / "o.json"),
                **FAST,
            )
        )


def test_a_training_failure_is_logged_and_skipped(tmp_path, monkeypatch):
    import workbench.quantum.qgas.search as search_module

    calls = []

    def failing_train(*args, **kwargs):
        calls.append(1)
        raise ValueError("simulator refused the circuit")

    monkeypatch.setattr(search_module, "train", failing_train)
    run = run_search(QgasConfig(problem="h2", iterations=2, transcript=str(tmp_path / "f.json"), **FAST))
    assert len(calls) == 2 and [r.reason for r in run.records] == ["train", "train"]
    assert run.best is None and run.valid_fraction == 0.0


def test_fewer_cnots_guideline_mutates_the_cheapest_proposal_below_target(tmp_path):
    import re

    config = QgasConfig(
        problem="lih", iterations=6, guideline="fewer-cnots", transcript=str(tmp_path / "g.json"), **FAST
    )
    run = run_search(config)
    assert "Guideline: keep the error low with as few CNOTs" in run.records[1].prompt
    for k, record in enumerate(run.records[1:], start=1):
        parent = int(re.search(r"of iteration (\d+)", record.raw).group(1))
        below = [r for r in run.records[:k] if r.valid and r.energy_error < 1.6e-3]
        if below:
            cheapest = min(below, key=lambda r: (r.cnots, round(r.energy_error, 9), r.iteration))
            assert parent == cheapest.iteration


def test_noisy_scores_exact_by_default_and_from_counted_shots_on_request(tmp_path):
    base = dict(problem="h2", iterations=2, device="fake_jakarta", **FAST)
    exact = run_search(QgasConfig(transcript=str(tmp_path / "e.json"), **base))
    sampled = run_search(QgasConfig(shots=2000, transcript=str(tmp_path / "s.json"), **base))
    for e, s in zip(exact.records, sampled.records):
        assert e.energy == s.energy  # training does not depend on the noisy score
        assert e.noisy_executions is None and s.noisy_executions == 5 * 2000  # H2: 5 measurement settings
        assert s.noisy_energy != e.noisy_energy and abs(s.noisy_energy - e.noisy_energy) < 0.1
    logged = json.loads((tmp_path / "s.json").read_text())
    assert [r["noisy_executions"] for r in logged["records"]] == [10000, 10000]
    assert load_records(tmp_path / "s.json") == sampled.records
