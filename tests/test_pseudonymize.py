"""Keyed HMAC-SHA256 pseudonyms, the identifier output rule, and the schema."""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.core.pseudonymize import (
    MIN_KEY_BYTES,
    PERSONAL_DATA_NOTICE,
    load_key,
    protect_identifiers,
    pseudonymize,
)
from sdckit.core.schema import Attribute, DataType, Role, Schema
from sdckit.errors import ConfigError, DataError, SdcInputError

KEY = b"0123456789abcdef0123456789abcdef"

# RFC 4231, test case 1: key = 0x0b * 20, data = "Hi There".
RFC4231_KEY = b"\x0b" * 20
RFC4231_HMAC = "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"


def test_rfc4231_hmac_sha256_vector_and_length():
    s = pd.Series(["Hi There"])
    assert pseudonymize(s, RFC4231_KEY, length=64).tolist() == [RFC4231_HMAC]
    assert pseudonymize(s, RFC4231_KEY, length=8).tolist() == [RFC4231_HMAC[:8]]
    assert pseudonymize(s, RFC4231_KEY).tolist() == [RFC4231_HMAC[:16]]  # default 16


def test_same_key_same_token_other_key_other_token():
    s = pd.Series(["alice", "bob", "alice", 7, "7"], index=[10, 11, 12, 13, 14], name="id")
    a = pseudonymize(s, KEY)
    assert a.index.tolist() == [10, 11, 12, 13, 14] and a.name == "id"
    assert a[10] == a[12] != a[11]
    assert a[13] == a[14]  # canonical text: 7 and "7" are the same identifier
    assert pseudonymize(s, KEY).equals(a)
    b = pseudonymize(s, KEY[::-1])
    assert (a != b).all()
    # never the unkeyed hash of the value
    assert a[10] != hashlib.sha256(b"alice").hexdigest()[:16]
    assert a[10] == hmac.new(KEY, b"alice", hashlib.sha256).hexdigest()[:16]


def test_missing_values_are_written_back_as_read():
    s = pd.Series(["x", "", None, np.nan, "y"], dtype=object)
    out = pseudonymize(s, KEY)
    assert out[1] == "" and out[2] is None and np.isnan(out[3])
    assert len(out[0]) == 16 and out[0] != out[4]


@pytest.mark.parametrize("length", [7, 65, 0, 16.5, "16", True])
def test_length_must_be_8_to_64(length):
    with pytest.raises(ConfigError, match="length"):
        pseudonymize(pd.Series(["a"]), KEY, length)


@pytest.mark.parametrize("key", [b"", b"short", "a-text-key-of-enough-length", None])
def test_unkeyed_or_short_key_refused(key):
    with pytest.raises(ConfigError, match="secret key of at least 16 bytes"):
        pseudonymize(pd.Series(["a"]), key)


def test_load_key_from_file_or_environment(tmp_path, monkeypatch):
    f = tmp_path / "key"
    f.write_bytes(KEY + b"\n")
    assert load_key(key_file=f) == KEY  # trailing newline stripped
    monkeypatch.setenv("SDCKIT_TEST_KEY", KEY.decode())
    assert load_key(key_env="SDCKIT_TEST_KEY") == KEY
    with pytest.raises(ConfigError, match="exactly one of 'key_file' or 'key_env'"):
        load_key()
    with pytest.raises(ConfigError, match="exactly one"):
        load_key(key_file=f, key_env="SDCKIT_TEST_KEY")
    with pytest.raises(ConfigError, match="does not exist"):
        load_key(key_file=tmp_path / "nope")
    monkeypatch.delenv("SDCKIT_UNSET_KEY", raising=False)
    with pytest.raises(ConfigError, match="'SDCKIT_UNSET_KEY' is not set"):
        load_key(key_env="SDCKIT_UNSET_KEY")
    f.write_bytes(b"tooshort")
    with pytest.raises(ConfigError, match=f"8 bytes; use at least {MIN_KEY_BYTES}"):
        load_key(key_file=f)


def test_identifiers_dropped_by_default_pseudonymized_on_request(tmp_path, monkeypatch):
    df = pd.DataFrame(
        {"name": ["Ann", "Bo"], "id": ["p1", ""], "ssn": ["1", "2"], "age": ["30", "40"]}
    )
    original = df.copy()
    (tmp_path / "k").write_bytes(KEY)
    monkeypatch.setenv("SDCKIT_TEST_KEY", KEY.decode())
    schema = Schema.from_roles(identifying=["name", "id", "ssn"], quasi_identifying=["age"])
    schema = schema.with_attribute(
        Attribute("id", Role.IDENTIFYING, pseudonymize={"key_file": "k", "length": 10})
    ).with_attribute(
        Attribute("ssn", Role.IDENTIFYING, pseudonymize={"key_env": "SDCKIT_TEST_KEY"})
    )
    out, notices = protect_identifiers(df, schema, base_dir=tmp_path)
    assert list(out.columns) == ["id", "ssn", "age"]  # "name" dropped
    assert out["id"].tolist() == [hmac.new(KEY, b"p1", hashlib.sha256).hexdigest()[:10], ""]
    assert out["ssn"].tolist() == pseudonymize(df["ssn"], KEY).tolist()
    assert out["age"].tolist() == ["30", "40"]
    assert len(notices) == 1 and "id, ssn" in notices[0]
    assert PERSONAL_DATA_NOTICE in notices[0] and "recital 26" in notices[0]
    assert df.equals(original)  # the input table is not modified
    only_drop, none = protect_identifiers(df, Schema.from_roles(identifying=["name"]))
    assert list(only_drop.columns) == ["id", "ssn", "age"] and none == []
    bad = schema.with_attribute(Attribute("id", Role.IDENTIFYING, pseudonymize={"salt": "x"}))
    with pytest.raises(
        ConfigError, match=r"attributes.id.pseudonymize: unknown key\(s\) \['salt'\]"
    ):
        protect_identifiers(df, bad, base_dir=tmp_path)


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.text(max_size=12), min_size=1, max_size=30))
def test_tokens_are_a_function_of_the_value(values):
    out = pseudonymize(pd.Series(values, dtype=object), KEY, 12)
    for v, t in zip(values, out, strict=True):
        assert t == ("" if v == "" else hmac.new(KEY, v.encode(), hashlib.sha256).hexdigest()[:12])


# ------------------------------------------------------------------ schema


def test_schema_roles_and_types():
    schema = Schema.from_roles(
        quasi_identifying=["age", "zip"],
        sensitive=["disease"],
        identifying=["name"],
        insensitive=["weight"],
        types={"age": "integer", "weight": DataType.DECIMAL},
    )
    assert schema.quasi_identifiers == ["age", "zip"]
    assert schema.sensitive == ["disease"] and schema.identifying == ["name"]
    assert schema.names("insensitive") == ["weight"]
    assert schema.attributes["age"].type is DataType.INTEGER and DataType.INTEGER.numeric
    assert schema.attributes["zip"].type is DataType.NOMINAL and not DataType.DATE.numeric
    assert {t.value for t in DataType} == {"nominal", "ordinal", "integer", "decimal", "date"}
    assert {r.value for r in Role} == {
        "identifying",
        "quasi_identifying",
        "sensitive",
        "insensitive",
    }
    ordinal = Attribute("edu", Role.SENSITIVE, DataType.ORDINAL, order=("low", "mid", "high"))
    assert schema.with_attribute(ordinal).attributes["edu"].order == ("low", "mid", "high")
    dated = Attribute("born", Role.QUASI_IDENTIFYING, DataType.DATE, format="%Y-%m-%d")
    assert schema.with_attribute(dated).quasi_identifiers == ["age", "zip", "born"]


def test_schema_errors_name_the_column():
    with pytest.raises(DataError, match="'age' is given two roles"):
        Schema.from_roles(quasi_identifying=["age"], sensitive=["age"])
    with pytest.raises(ConfigError, match="column 'age': unknown type 'number'; use one of"):
        Schema.from_roles(quasi_identifying=["age"], types={"age": "number"})
    with pytest.raises(ConfigError, match="unknown role 'secret'"):
        Schema.from_roles(quasi_identifying=["age"]).names("secret")
    schema = Schema.from_roles(quasi_identifying=["age", "zip"])
    with pytest.raises(SdcInputError, match=r"'zip' not found in the data"):
        schema.check_columns(pd.DataFrame({"age": [1]}))
