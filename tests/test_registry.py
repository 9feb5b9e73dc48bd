"""The one registry mechanism (:mod:`sdckit.core.registry`): names, aliases, traits, lazy
loading and the message for a name that is none."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest

from sdckit.core.registry import NoTraits, Registry


@dataclass(frozen=True)
class Traits:
    fast: bool = False


def test_names_aliases_traits_and_where() -> None:
    reg: Registry[Traits] = Registry("widget", Traits())
    reg.add("alpha", len, Traits(fast=True), aliases=("a",))
    reg.add("beta", max)
    assert reg.names() == ("alpha", "beta") and list(reg) == ["alpha", "beta"]
    assert reg.all_names() == ("alpha", "beta", "a")
    assert "a" in reg and "gamma" not in reg and len(reg) == 2
    assert reg.canonical("a") == "alpha" and reg.load("a") is len
    assert reg.traits("beta") == Traits(fast=False)
    assert reg.where(lambda t: t.fast) == ("alpha",)


def test_a_path_target_is_imported_on_first_load_only() -> None:
    reg: Registry[NoTraits] = Registry("thing", NoTraits())
    sys.modules.pop("colorsys", None)
    reg.add("hls", "colorsys:rgb_to_hls")
    assert "colorsys" not in sys.modules  # listing and traits import nothing
    assert reg.traits("hls") == NoTraits()
    fn = reg.load("hls")
    assert "colorsys" in sys.modules and fn(0.0, 0.0, 0.0) == (0.0, 0.0, 0.0)
    assert reg.load("hls") is fn


def test_a_name_taken_by_another_target_is_refused() -> None:
    reg: Registry[NoTraits] = Registry("thing", NoTraits())
    reg.add("x", len, aliases=("y",))
    reg.add("x", len, aliases=("y",))  # the same target again: replaced, not refused
    with pytest.raises(TypeError, match="'y' is taken"):
        reg.add("z", max, aliases=("y",))


def test_an_unknown_name_lists_the_names_and_the_closest() -> None:
    reg: Registry[NoTraits] = Registry("algorithm", NoTraits())
    reg.add("optimal", len)
    reg.add("mondrian", max)
    with pytest.raises(KeyError) as info:
        reg.entry("mondrain")
    message = info.value.args[0]
    assert message == (
        "unknown algorithm 'mondrain' (did you mean 'mondrian'?); choose one of: optimal, mondrian"
    )
