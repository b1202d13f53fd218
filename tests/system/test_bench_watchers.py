"""The live tables' benchmark (bench/watchers.py): a short run on its own stack, with few
streams, holds them all, delivers every event to each and alternates its phases."""

from __future__ import annotations

from bench import watchers


def test_a_short_run_alternates_its_phases_and_delivers_every_event() -> None:
    result = watchers.run(8, 1.0, 1, cycles=2)

    assert (result["streams_held"], result["streams_refused"]) == (8, 0)
    assert result["events_expected"] > 0
    assert result["events_delivered"] == result["events_expected"]
    assert result["events_missing"] == 0
    # without, with, without, with, without: each played, each with-phase set against
    # the phases either side of it
    assert len(result["phases_per_s"]) == 5
    assert all(rate > 0 for rate in result["phases_per_s"])
    assert len(result["cycle_ratios"]) == 2
    assert all(ratio > 0 for ratio in result["cycle_ratios"])
    assert result["cpu_ms_per_move_with"]["watchers"] >= 0
    text = watchers.render(result)
    assert "8 of 8 streams held, 0 refused" in text
    assert f"{result['events_delivered']} of {result['events_expected']} delivered" in text
