"""Which attack each privacy model defends against: the attack-model table.

Fung, Wang, Chen & Yu (2010), "Privacy-preserving data publishing: a survey of recent
developments", ACM Computing Surveys 42(4), article 14, Section 2 and Table II, sort the
privacy models of microdata publishing by the attack each one bounds:

* **record linkage** (``record_linkage``): the adversary links a known person to their
  record through the quasi-identifiers (identity disclosure);
* **attribute linkage** (``attribute_linkage``): without finding the record, the adversary
  infers the person's sensitive value from the group that matches the quasi-identifiers
  (attribute disclosure);
* **table linkage** (``table_linkage``): the adversary learns whether the person's record is
  in the released table at all (membership disclosure);
* **probabilistic attack** (``probabilistic_attack``): the adversary's belief about a person
  changes too much between before and after seeing the release (prior -> posterior),
  whether or not a record, value or membership is pinned down.

:data:`ATTACK_TABLE` holds one :class:`ModelAttacks` per model. Its keys are the job-file
names (``spec_name``) of :mod:`sdckit.models` -- every name of
:data:`sdckit.jobs.spec.MODEL_NAMES` has one (a test checks it, so a new model needs a row) --
plus the survey's models that are no job-file model in sdckit: ``ct_isolation`` (a risk
measure of ``sdckit evaluate``, :mod:`sdckit.risk.isolation`), ``dgamma_privacy`` (the
guarantee of the (alpha, beta)-algorithm, :mod:`sdckit.synthesis.alpha_beta`) and
``distributional_privacy`` (documented only: a property of a mechanism, no check on a
table). :func:`attack_coverage` answers, for a list of models, which attacks each covers
and which attacks none of them covers.

Rows taken from the survey's Table II cite it; the rows for sdckit's models the survey does
not list (k-map, LKC-privacy, the risk thresholds, beta-likeness, delta-disclosure,
profitability) give their own one-line reason with the model's paper.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sdckit.errors import ParameterError

__all__ = [
    "ATTACKS",
    "ATTACK_LABELS",
    "ATTACK_TABLE",
    "ModelAttacks",
    "attack_coverage",
    "model_key",
]

#: The four attack models of Fung et al. (2010), in the survey's column order.
ATTACKS = ("record_linkage", "attribute_linkage", "table_linkage", "probabilistic_attack")
#: Their names as the survey writes them.
ATTACK_LABELS = {
    "record_linkage": "record linkage",
    "attribute_linkage": "attribute linkage",
    "table_linkage": "table linkage",
    "probabilistic_attack": "probabilistic attack",
}

_SURVEY = "Fung, Wang, Chen & Yu 2010, Table II"


@dataclass(frozen=True)
class ModelAttacks:
    """One row of the attack-model table."""

    label: str
    attacks: tuple[str, ...]
    source: str
    #: where the model lives in sdckit ("job model", or the module that offers it)
    in_sdckit: str = "job model"


def _row(label: str, attacks: str, source: str, in_sdckit: str = "job model") -> ModelAttacks:
    codes = {"RL": ATTACKS[0], "AL": ATTACKS[1], "TL": ATTACKS[2], "PA": ATTACKS[3]}
    return ModelAttacks(label, tuple(codes[a] for a in attacks.split("+")), source, in_sdckit)


#: model key -> the attacks it defends against (module docstring).
ATTACK_TABLE: dict[str, ModelAttacks] = {
    # --- the survey's Table II ---
    "k_anonymity": _row("k-anonymity", "RL", _SURVEY),
    "multir_k_anonymity": _row("MultiR k-anonymity", "RL", _SURVEY),
    "l_diversity": _row("l-diversity", "RL+AL", _SURVEY),
    "confidence_bounding": _row("confidence bounding", "AL", _SURVEY),
    "alpha_k_anonymity": _row("(alpha, k)-anonymity", "RL+AL", _SURVEY),
    "xy_privacy": _row("(X, Y)-privacy", "RL+AL", _SURVEY),
    "ke_anonymity": _row("(k, e)-anonymity", "AL", _SURVEY),
    "epsilon_m_anonymity": _row("(epsilon, m)-anonymity", "AL", _SURVEY),
    "personalized_privacy": _row("personalized privacy", "AL", _SURVEY),
    "t_closeness": _row("t-closeness", "AL+PA", _SURVEY),
    "delta_presence": _row("delta-presence", "TL", _SURVEY),
    "ct_isolation": _row(
        "(c, t)-isolation", "RL+PA", _SURVEY, "risk measure: sdckit evaluate (risk.isolation)"
    ),
    "differential_privacy": _row("epsilon-differential privacy", "TL+PA", _SURVEY),
    "dgamma_privacy": _row(
        "(d, gamma)-privacy",
        "TL+PA",
        _SURVEY,
        "guarantee of the alpha_beta synthesizer (synthesis.alpha_beta)",
    ),
    "distributional_privacy": _row(
        "distributional privacy",
        "TL+PA",
        _SURVEY,
        "documented only: a property of a mechanism, not a check on a table",
    ),
    # --- sdckit's models that Table II does not list ---
    "k_map": _row(
        "k-map",
        "RL",
        "k-anonymity against the population (Sweeney 2002; El Emam & Dankar 2008): every "
        "released class matches >= k people of the population, bounding record linkage",
    ),
    "lkc": _row(
        "LKC-privacy",
        "RL+AL",
        "Mohammed, Fung, Hung & Lee 2009: any L quasi-identifier values match >= K records "
        "(record linkage) and infer a sensitive value with confidence <= C (attribute linkage)",
    ),
    "average_risk": _row(
        "average re-identification risk",
        "RL",
        "bounds the expected share of records re-identified by record linkage (prosecutor "
        "model, El Emam & Dankar 2008; ARX's average-risk model)",
    ),
    "sample_uniqueness": _row(
        "sample uniqueness",
        "RL",
        "bounds the share of records unique in the release, the records record linkage "
        "singles out (ARX's sample-uniqueness model)",
    ),
    "population_uniqueness": _row(
        "population uniqueness",
        "RL",
        "bounds the estimated share of the population unique on the quasi-identifiers, the "
        "people record linkage singles out (Pitman, Zayatz, SNB, Dankar estimators as in "
        "ARX's population-uniqueness model)",
    ),
    "profitability_prosecutor": _row(
        "profitability (prosecutor)",
        "RL",
        "Wan et al. 2015 (ARX's ProfitabilityProsecutor): a class is released only where the "
        "publisher's expected payout stays positive given the adversary attacks when record "
        "linkage pays (gain / class size > cost), bounding record linkage economically",
    ),
    "profitability_journalist": _row(
        "profitability (journalist)",
        "RL",
        "Wan et al. 2015 (ARX's ProfitabilityJournalist): as the prosecutor variant, with the "
        "linkage's success probability taken from the population class",
    ),
    "profitability_prosecutor_no_attack": _row(
        "no-attack profitability (prosecutor)",
        "RL",
        "Wan et al. 2015 (ARX's ProfitabilityProsecutorNoAttack): a class is released only "
        "where record linkage costs the adversary more than it gains (gain / class size < "
        "cost), k-anonymity with k = floor(gain / cost) + 1",
    ),
    "profitability_journalist_no_attack": _row(
        "no-attack profitability (journalist)",
        "RL",
        "Wan et al. 2015 (ARX's ProfitabilityJournalistNoAttack): as the prosecutor variant "
        "against the population class, k-map with k = floor(gain / cost) + 1",
    ),
    "beta_likeness": _row(
        "beta-likeness",
        "AL+PA",
        "Cao & Karras 2012: bounds the relative gain of the belief in each sensitive value "
        "from the table's distribution (prior) to a class's (posterior), as t-closeness",
    ),
    "delta_disclosure": _row(
        "delta-disclosure privacy",
        "AL+PA",
        "Brickell & Shmatikov 2008: |log(p(s | class) / p(s | table))| < delta bounds how far a "
        "class moves the belief in any sensitive value, in both directions",
    ),
}


#: Names under which ``describe()`` reports a model when they differ from its ``spec_name``.
_DESCRIBED_AS = {"lkc_privacy": "lkc"}


def model_key(model: Any) -> str:
    """The table key of ``model``: a key itself, a :class:`~sdckit.models.base.PrivacyModel`
    (its ``spec_name``) or a ``describe()`` mapping (its ``"model"``; LKC-privacy describes
    itself as ``lkc_privacy``)."""
    if isinstance(model, str):
        key = model
    elif isinstance(model, Mapping) and isinstance(model.get("model"), str):
        key = model["model"]
    elif isinstance(getattr(model, "spec_name", None), str):
        key = model.spec_name
    else:
        raise ParameterError(
            f"attack coverage: {model!r} is not a privacy model (give a model, its describe() "
            "mapping or its job-file name such as 'k_anonymity')"
        )
    key = _DESCRIBED_AS.get(key, key)
    if key not in ATTACK_TABLE:
        from sdckit.core.spec import did_you_mean

        raise ParameterError(
            f"attack coverage: unknown privacy model {key!r}; known: "
            f"{', '.join(ATTACK_TABLE)}{did_you_mean(key, list(ATTACK_TABLE))}"
        )
    return key


def attack_coverage(models: Iterable[Any]) -> dict[str, Any]:
    """Which attacks the given models defend against, and which none of them does.

    ``models``: keys of :data:`ATTACK_TABLE`, model objects or their ``describe()``
    mappings (a model named twice is listed once). Returns a JSON-ready mapping:
    ``models`` (per model: ``model``, ``label``, ``attacks``, ``source``, ``in_sdckit``),
    ``covered`` and ``uncovered`` (attacks, in :data:`ATTACKS` order), ``by_attack``
    (attack -> the models covering it) and ``table`` (Fung et al. 2010, Table II, plus
    sdckit's rows). Raises :class:`ParameterError` for an unknown model.
    """
    keys: list[str] = []
    for m in models:
        key = model_key(m)
        if key not in keys:
            keys.append(key)
    rows = [
        {
            "model": k,
            "label": ATTACK_TABLE[k].label,
            "attacks": list(ATTACK_TABLE[k].attacks),
            "source": ATTACK_TABLE[k].source,
            "in_sdckit": ATTACK_TABLE[k].in_sdckit,
        }
        for k in keys
    ]
    by_attack = {a: [k for k in keys if a in ATTACK_TABLE[k].attacks] for a in ATTACKS}
    return {
        "models": rows,
        "covered": [a for a in ATTACKS if by_attack[a]],
        "uncovered": [a for a in ATTACKS if not by_attack[a]],
        "by_attack": by_attack,
        "table": "Fung, Wang, Chen & Yu (2010), ACM Computing Surveys 42(4):14, Table II",
    }
