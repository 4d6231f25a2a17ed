"""Model prices: what a run costs when its agent CLI does not say.

Claude Code reports a run's total (``total_cost_usd``) only in its final result line; an
agent stopped before that line, and every Codex run, reports token usage only. Usage is
then priced with this table and the cost is marked as an estimate.

Prices are US dollars per million tokens, per kind of token. A model is matched by the
longest table key that its name starts with (``claude-sonnet`` prices
``claude-sonnet-4-5-20250929``); a name nothing matches is priced at ``default``. The
plan's ``[session.prices]`` adds entries or replaces these, e.g.::

    [session.prices.gpt-5]
    input = 1.25
    output = 10.0
    cache_read = 0.125

The defaults are the providers' published list prices when this table was written;
they are estimates, and a plan that needs exact figures sets its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["DEFAULT_PRICES", "Price", "PriceTable"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Price:
    """US dollars per million tokens of each kind (uncached input, output, cache reads,
    cache writes)."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def cost(
        self,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """The cost in US dollars of the given token counts."""
        total = (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_read_tokens * self.cache_read
            + cache_write_tokens * self.cache_write
        )
        return total / 1_000_000


DEFAULT_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        "claude-opus-4-0": Price(input=15.0, output=75.0, cache_read=1.5, cache_write=18.75),
        "claude-opus-4-1": Price(input=15.0, output=75.0, cache_read=1.5, cache_write=18.75),
        "claude-opus": Price(input=5.0, output=25.0, cache_read=0.5, cache_write=6.25),
        "claude-sonnet": Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
        "claude-haiku": Price(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25),
        "claude-3-5-haiku": Price(input=0.8, output=4.0, cache_read=0.08, cache_write=1.0),
        "gpt-5": Price(input=1.25, output=10.0, cache_read=0.125),
        "gpt-5-mini": Price(input=0.25, output=2.0, cache_read=0.025),
        "gpt-5-nano": Price(input=0.05, output=0.4, cache_read=0.005),
        "o3": Price(input=2.0, output=8.0, cache_read=0.5),
        "o4-mini": Price(input=1.1, output=4.4, cache_read=0.275),
        "default": Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    }
)


class PriceTable:
    """The defaults with a plan's entries over them; looks a model's price up."""

    __slots__ = ("_prices",)

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self._prices: dict[str, Price] = {**DEFAULT_PRICES, **(overrides or {})}

    def price(self, model: str) -> Price:
        """The price of ``model``: the longest key it starts with, else ``default``."""
        name = model.strip().lower()
        name = name.split("[", 1)[0]  # "claude-opus-4-8[1m]": the context variant
        best = ""
        for key in self._prices:
            if key != "default" and name.startswith(key.lower()) and len(key) > len(best):
                best = key
        return self._prices[best or "default"]

    def cost(
        self,
        model: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """The estimated cost in US dollars of one model response."""
        return self.price(model).cost(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
        )
