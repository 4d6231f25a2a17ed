"""The model price table: longest-prefix match, overrides, and pricing of usage."""

from __future__ import annotations

import pytest

from seawall.errors import PlanError
from seawall.events import Final, Usage
from seawall.plan import parse_plan
from seawall.pricing import DEFAULT_PRICES, Price, PriceTable
from seawall.runner import RunCounter


def test_the_longest_key_a_model_starts_with_wins() -> None:
    table = PriceTable()
    assert table.price("claude-sonnet-4-5-20250929") == DEFAULT_PRICES["claude-sonnet"]
    assert table.price("claude-opus-4-1-20250805") == DEFAULT_PRICES["claude-opus-4-1"]
    assert table.price("claude-opus-4-8[1m]") == DEFAULT_PRICES["claude-opus"]
    assert table.price("gpt-5-mini") == DEFAULT_PRICES["gpt-5-mini"]
    assert table.price("something-new") == DEFAULT_PRICES["default"]
    assert table.price("") == DEFAULT_PRICES["default"]


def test_overrides_replace_and_add_entries() -> None:
    table = PriceTable(
        {"gpt-5.5": Price(input=2.0, output=8.0), "default": Price(input=0, output=0)}
    )
    assert table.cost("gpt-5.5", input_tokens=1_000_000, output_tokens=500_000) == 6.0
    assert table.cost("unknown", input_tokens=10**9) == 0.0
    assert table.price("gpt-5") == DEFAULT_PRICES["gpt-5"]


def test_every_kind_of_token_is_priced() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    cost = price.cost(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_read_tokens=10**6,
        cache_write_tokens=10**6,
    )
    assert cost == pytest.approx(3.0 + 15.0 + 0.3 + 3.75)


def test_usage_without_a_cost_is_an_estimate_until_the_cli_total_arrives() -> None:
    counter = RunCounter(prices=PriceTable())
    counter.observe(
        Usage(message_id="m1", model="claude-sonnet-4-5", input_tokens=1000, output_tokens=100)
    )
    assert counter.cost_usd == pytest.approx((1000 * 3.0 + 100 * 15.0) / 1e6)
    assert counter.cost_estimated
    counter.observe(
        Usage(message_id="m1", model="claude-sonnet-4-5", input_tokens=1000)
    )  # repeated
    assert counter.input_tokens == 1000
    counter.observe(Final(text="done", cost_usd=0.5))
    assert counter.cost_usd == 0.5 and not counter.cost_estimated


def test_without_a_table_usage_costs_what_it_says() -> None:
    counter = RunCounter()
    counter.observe(Usage(message_id="m1", input_tokens=1000, output_tokens=100))
    assert counter.cost_usd == 0.0 and not counter.cost_estimated


PLAN = """
[session]
name = "s"
[session.budgets]
tokens = 1000
[session.prices."gpt-5.5"]
input = 1.5
output = 12
[[task]]
id = "a"
prompt = "p"
"""


def test_the_plan_sets_prices_and_a_token_budget() -> None:
    plan = parse_plan(PLAN)
    assert plan.session.prices["gpt-5.5"] == Price(input=1.5, output=12.0)
    assert plan.session.budgets.tokens == 1000


def test_a_price_typo_names_the_field() -> None:
    with pytest.raises(PlanError, match=r"session\.prices\.gpt-5\.5\.ouput.*did you mean 'output'"):
        parse_plan(PLAN.replace("output = 12", "ouput = 12"))
