"""The benchmark harness reports ratios against a same-run baseline."""

from tests.bench.harness import BenchResult, alternating, best_of, paired


def test_ratio_and_line() -> None:
    result = BenchResult(
        name="x", figure=2.0, baseline=4.0, unit="ms", baseline_name="base", target="<= 1"
    )
    assert result.ratio == 0.5
    assert "ratio 0.500" in result.line()
    assert "target <= 1" in result.line()


def test_zero_baseline_is_infinite_ratio() -> None:
    assert BenchResult(name="x", figure=1, baseline=0, unit="s", baseline_name="b").ratio == float(
        "inf"
    )


def test_best_of_runs_the_function() -> None:
    calls: list[int] = []
    assert best_of(3, lambda: calls.append(1)) >= 0
    assert len(calls) == 3


def test_alternating_turns_the_order_every_round() -> None:
    order: list[str] = []
    times = alternating(4, lambda: order.append("a"), lambda: order.append("b"))
    assert order == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert [len(side) for side in times] == [4, 4]
    assert all(time >= 0 for side in times for time in side)


def test_paired_takes_the_median_of_the_rounds_ratios_not_the_ratio_of_bests() -> None:
    # the machine's speed drifted between rounds: two rounds say 2, and the two bests
    # (2.4 in the first round, 1.0 in the second) would say 2.4
    measured = [2.4, 4.0, 4.0]
    baseline = [1.2, 1.0, 2.0]
    timing = paired(measured, baseline)
    assert timing.ratio == 2.0
    assert (timing.low, timing.high) == (2.0, 4.0)
    assert (timing.median, timing.best) == (4.0, 2.4)
    assert (timing.baseline_median, timing.baseline_best) == (1.2, 1.0)
    result = BenchResult(
        name="x", figure=timing.median, baseline=timing.baseline_median, unit="s",
        baseline_name="b", paired_ratio=timing.ratio,
    )  # fmt: skip
    assert result.ratio == 2.0 and "ratio 2.000" in result.line()


def test_paired_of_one_round_is_its_ratio() -> None:
    timing = paired([3.0], [2.0])
    assert timing.ratio == timing.low == timing.high == 1.5
