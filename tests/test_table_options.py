"""The table methods' option specs (:mod:`sdckit.tables.options`): one per method of the
registry, each field a parameter its function reads, bad values refused naming the key."""

from __future__ import annotations

import inspect

import pytest

from sdckit.errors import ConfigError, ParameterError
from sdckit.tables.options import OPTIONS, parse_table_options
from sdckit.tables.registry import TABLE_METHODS
from sdckit.tables.suppression import DEFAULT_TIME_LIMIT


def test_every_table_method_has_an_options_spec() -> None:
    assert set(OPTIONS) == set(TABLE_METHODS.names())


@pytest.mark.parametrize("method", TABLE_METHODS.names())
def test_each_option_is_a_parameter_of_the_method(method: str) -> None:
    """What the spec declares is what the method's function takes, so the job-file
    reference documents real parameters."""
    taken = set(inspect.signature(TABLE_METHODS.load(method)).parameters)
    assert set(OPTIONS[method].model_fields) <= taken, method


def test_the_documented_default_time_limit_is_the_code_s() -> None:
    assert f"default {DEFAULT_TIME_LIMIT:g}," in OPTIONS["optimal"].__doc__.replace("\n", " ")


@pytest.mark.parametrize(
    ("method", "options", "message"),
    [
        ("optimal", {"base": 5}, "'j.yaml': options: unknown option 'base'; allowed: "),
        ("rounding", {}, "'j.yaml': options.base is required"),
        ("rounding", {"base": -5}, "'j.yaml': options.base must be > 0, got -5"),
        ("cta", {"time_limit": "soon"}, "'j.yaml': options.time_limit must be a number"),
        ("cell_key", {"key": "k"}, "'j.yaml': options.ptable is required"),
        ("modular", {"singletons": "maybe"}, "options.singletons must be true or false"),
    ],
)
def test_bad_options_name_the_key(method: str, options: dict, message: str) -> None:
    with pytest.raises(ParameterError) as info:
        parse_table_options(method, options, "'j.yaml': options")
    assert message in str(info.value)


def test_good_options_parse_and_an_unknown_method_is_refused() -> None:
    parsed = parse_table_options("rounding", {"base": 5, "time_limit": 2})
    assert (parsed.base, parsed.time_limit) == (5.0, 2.0)
    assert parse_table_options("cell_key", {"ptable": "p.txt"}).key is None
    with pytest.raises(ConfigError, match="unknown table method 'magic'"):
        parse_table_options("magic", {})


def test_audit_options_read_codes_as_text_and_refuse_a_single_code() -> None:
    """``method: audit``'s status codes: a YAML number is a code; one code alone is refused,
    naming the key, since a list is meant."""
    parsed = parse_table_options("audit", {"primary_statuses": [1, "u"], "status": "flag"})
    assert (parsed.primary_statuses, parsed.status, parsed.secondary_statuses) == (
        ["1", "u"],
        "flag",
        None,
    )
    with pytest.raises(ParameterError, match=r"options.published_statuses must be a list of codes"):
        parse_table_options("audit", {"published_statuses": "s"}, "'j.yaml': options")
    with pytest.raises(ParameterError, match="unknown option 'base'"):
        parse_table_options("audit", {"base": 5}, "'j.yaml': options")
