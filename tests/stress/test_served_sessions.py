"""Eight users at once over HTTP against ``python -m retrieval serve --workers 2``: real ``streamlit run`` processes
behind the balancer, each user a client with its own cookies, speaking the app's WebSocket protocol as the browser
does (bench/app_sessions.py says how a request is made and timed). Every request's trace is downloaded through the
balancer from its session's page, and its lists must be those of its run alone; the figures are printed and
written to ``<tmp>/served_sessions.json``. The ratio is asserted only against a floor that catches a collapse to
one process (the goal, 8 users ≥ 1.6× one user's throughput on 2 cores, is measured by ``make bench-sessions``
and reported in the README)."""

from __future__ import annotations

import json

import pytest

from bench.app_sessions import line, measure

pytestmark = pytest.mark.stress


def test_eight_users_over_http_on_two_workers_get_their_lists_alone(tmp_path) -> None:
    with (tmp_path / "serve.log").open("wb") as log:
        try:
            result = measure(2, tmp_path, log)
        except RuntimeError:
            print((tmp_path / "serve.log").read_text(errors="replace")[-3000:])
            raise
    (tmp_path / "served_sessions.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print("\n" + line(result))
    assert not result["problems"], result["problems"]
    assert not result["unlike"], result["unlike"][:5]
    n = result["users"] * result["questions_per_user"]
    assert result["one_at_a_time"]["requests"] == result["all_at_once"]["requests"] == 2 * n
    assert result["throughput_ratio"] >= 1.0, result
