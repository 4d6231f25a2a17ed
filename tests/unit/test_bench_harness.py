"""The benchmark harness reports ratios against a same-run baseline."""

from tests.bench.harness import BenchResult, best_of


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
