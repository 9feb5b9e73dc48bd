"""SafePub: truthful anonymization with (epsilon, delta)-differential privacy.

R. Bild, K. A. Kuhn and F. Prasser, "SafePub: a truthful data anonymization algorithm with
strong privacy guarantees", Proceedings on Privacy Enhancing Technologies 2018(1), 67-87;
ARX: ``EDDifferentialPrivacy`` with ``DataDependentEDDPAlgorithm``. Given the model
:class:`~sdckit.models.differential_privacy.DifferentialPrivacy` ``(epsilon, delta,
epsilon_search)``:

1. **Random sampling**: every record is kept independently with probability
   ``beta = 1 - e**(-epsilon_anon)``, ``epsilon_anon = epsilon - epsilon_search`` (Li, Qardaji
   & Su 2012, Theorem 5). The draw is exact: ``beta`` is a multiple of ``2**-53`` and a record
   is kept when a uniform integer below ``2**53`` is below ``beta * 2**53``
   (:func:`~sdckit.models.differential_privacy.sampling_probability`).
2. **Private search** over the full-domain generalization lattice of the sample (the
   attributes' hierarchies, as :func:`~sdckit.algorithms.optimal.optimal` uses), ARX's
   ``DataDependentEDDPAlgorithm.traverse``: the pivot starts at the top (every attribute at
   its highest level); in each of ``search_steps`` steps the predecessors of the pivot (one
   attribute one level lower) join the candidate set, the pivot leaves it, and the next pivot
   is drawn from the candidates by the exponential mechanism (McSherry & Talwar 2007) with
   its share of ``epsilon_search`` (step 4) and the score function's sensitivity 1, through
   :func:`sdckit.dp.selection.exponential` (exact sampling, charged to the accountant).
3. **Safe k-anonymization**: under the chosen transformation every class of fewer than ``k``
   sampled records is suppressed, ``k`` as ARX's ``ParameterCalculation`` derives it: one
   more than the smallest integer ``k'`` with ``d(k', beta, epsilon_anon) < delta``, so
   ``d(k, beta, epsilon_anon) <= delta`` (:func:`~sdckit.models.differential_privacy.
   safepub_parameters`).

4. **Output** (option ``output``), the choice of the released transformation among the
   visited pivots:

   * ``"exponential"`` (default): one more exponential mechanism over the distinct visited
     pivots (the top and every pivot drawn), scores of sensitivity 1 as in step 2. The search
     budget is split evenly over the ``search_steps + 1`` selections: ``epsilon_search /
     (search_steps + 1)`` each. The candidate set is a function of the earlier selections'
     outputs only, so adaptive sequential composition (Dwork & Roth 2014, Theorem 3.16)
     covers the final choice, as it covers each search step (Bild, Kuhn & Prasser 2018,
     Section 4, compose the search steps the same way).
   * ``"last"``: the last pivot drawn, post-processing of the search's outputs (Dwork & Roth
     2014, Proposition 2.1); each of the ``search_steps`` selections gets
     ``epsilon_search / search_steps``.
   * ``"best_exact"``: ARX's behaviour (``DataDependentEDDPAlgorithm`` keeps the visited pivot
     of the highest score; the paper's Algorithm 1 does the same): the pivot of the highest
     *exact* score. That comparison reads the data without noise and no composition argument
     covers it: the release is then **not** covered by epsilon, and the report and JSON say
     so (``privacy.covered_by_epsilon`` is false). Kept to reproduce ARX's output.

Sequential composition (Dwork & Roth 2014, Theorem 3.16) gives ``(epsilon_anon +
epsilon_search, delta)``-DP for ``exponential`` and ``last``: the accountant is charged
``(epsilon_anon, delta)`` for steps 1 and 3 and the per-selection share of ``epsilon_search``
(pure) for each exponential-mechanism selection of steps 2 and 4.

Score functions (higher is better; Bild et al. 2018, Section 5, normalized so that their
sensitivity is 1; ARX ``getScore`` of the metrics; ``n`` the input records, ``m`` the
quasi-identifiers, unsampled records count as suppressed):

* ``loss`` (granularity, ARX's default quality model; ARX ``MetricMDNMLoss.getScore``):
  ``-(1 / (m max(k - 1, 1))) * sum over records of sum_i share_i``, a suppressed or unsampled
  record counting ``1`` per attribute, ``share_i`` the share of attribute ``i``'s leaves under
  the released value (Iyengar 2002).
* ``discernibility`` (ARX ``MetricSDNMDiscernability.getScore``):
  ``-(sum_{released E} |E|**2 + n * #suppressed records) / (n (k**2 / (k - 1) + 1))``
  (``/ (5 n)`` when ``k = 1``).
* ``aecs`` (number of classes, ARX ``MetricSDAECS.getScore``): the number of released
  classes, plus one when any record is suppressed or unsampled (they form one class).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.algorithms.options import SafePubOptions, parse_options
from sdckit.core.frequency import FrequencySet
from sdckit.core.release import SUPPRESSED, AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, DataError, ParameterError
from sdckit.models.base import PrivacyModel
from sdckit.models.differential_privacy import DifferentialPrivacy

__all__ = ["SCORES", "safepub", "score_node", "selection_count"]

#: The score functions (option ``score``).
SCORES = ("loss", "discernibility", "aecs")


def _model(models: Sequence[PrivacyModel]) -> DifferentialPrivacy:
    if isinstance(models, PrivacyModel):
        models = [models]
    dp = [m for m in models if isinstance(m, DifferentialPrivacy)]
    others = [m.name for m in models if not isinstance(m, DifferentialPrivacy)]
    if len(dp) != 1 or others:
        raise ConfigError(
            "safepub: give exactly one privacy model, DifferentialPrivacy(epsilon, delta) "
            "(job file: `- differential_privacy: {epsilon: 1, delta: 1e-5}`)"
            + (f"; it cannot be combined with {', '.join(others)}" if others else "")
        )
    return dp[0]


def score_node(
    fs: FrequencySet,
    score: str,
    k: int,
    n_total: int,
    shares: Sequence[Sequence[np.ndarray]],
) -> tuple[float, np.ndarray]:
    """The score of one transformation (its frequency set ``fs`` of the *sampled* records)
    and the flags of its suppressed classes (fewer than ``k`` records).

    ``n_total`` is the number of input records (sampled or not); ``shares[i][level]`` the
    domain share of each code of attribute ``i`` at ``level``. Formulas: module docstring.
    """
    counts = fs.counts
    small = counts < k
    n_sampled = int(counts.sum())
    unsampled = n_total - n_sampled
    suppressed = int(counts[small].sum()) + unsampled
    if score == "loss":
        m = len(fs.quasi_identifiers)
        kept = ~small
        total = 0.0
        for i, level in enumerate(fs.levels):
            share = shares[i][level][fs.keys[kept, i]]
            total += float(np.dot(counts[kept], share))
        total += float(suppressed) * m
        value = -total / (m * max(k - 1, 1))
    elif score == "discernibility":
        kept_counts = counts[~small].astype(np.float64)
        total = float(np.dot(kept_counts, kept_counts)) + float(suppressed) * n_total
        norm = 5.0 if k == 1 else k * k / (k - 1.0) + 1.0
        value = -total / (n_total * norm)
    elif score == "aecs":
        value = float(np.count_nonzero(~small)) + (1.0 if suppressed else 0.0)
    else:  # pragma: no cover - the options spec admits SCORES only
        raise ParameterError(f"safepub: unknown score {score!r}; use one of {', '.join(SCORES)}")
    return value, small


def selection_count(search_steps: int, output: str) -> int:
    """How many exponential-mechanism selections share ``epsilon_search``: one per search step,
    plus the final choice among the visited pivots for ``output="exponential"`` (module
    docstring, step 4)."""
    return search_steps + 1 if output == "exponential" else search_steps


def _privacy(
    output: str,
    eps_anon: float,
    eps_search: float,
    delta: float,
    beta: float,
    k: int,
    steps: int,
    eps_step: float,
    chose: bool,
    randomness: str,
) -> dict[str, Any]:
    """What the release's guarantee covers, as the report and the JSON state it: the
    accounting of every step charged (``steps`` search selections run; ``chose``: whether the
    output choice ran, i.e. something was sampled), whether the output choice is covered
    (``covered_by_epsilon``, module docstring) and whether the release is private at all
    (``private``: covered, and the noise drawn from the OS CSPRNG -- ``randomness`` is the
    source's :attr:`~sdckit.dp.randomness.Randomness.kind`; with
    :data:`~sdckit.dp.randomness.INSECURE_KIND` the guarantee starts with
    :data:`~sdckit.dp.randomness.NOT_PRIVATE`)."""
    from sdckit.dp.randomness import INSECURE_KIND, NOT_PRIVATE

    accounting = [
        {"step": "random sampling + suppression of classes under k", "epsilon": eps_anon,
         "delta": delta, "source": "Li, Qardaji & Su 2012, Theorem 5"},
        {"step": f"private search: {steps} exponential-mechanism selections",
         "epsilon": eps_step * steps, "epsilon_each": eps_step, "delta": 0.0,
         "source": "McSherry & Talwar 2007"},
    ]  # fmt: skip
    covered = output != "best_exact"
    if output == "exponential" and chose:
        accounting.append(
            {"step": "output: exponential-mechanism choice among the visited pivots",
             "epsilon": eps_step, "delta": 0.0, "source": "McSherry & Talwar 2007"}
        )  # fmt: skip
        how = f"one exponential-mechanism choice among the visited pivots ({eps_step:g})"
    elif output == "last":
        how = "the last pivot of the search (post-processing, no budget)"
    else:
        how = "the visited pivot of the highest EXACT score (ARX's choice)"
    total = eps_anon + eps_search
    guarantee = (
        f"({total:g}, {delta:g})-differential privacy: sampling with beta={beta:.6g} and "
        f"suppression of classes under k={k} give ({eps_anon:g}, {delta:g}) (Li, Qardaji & "
        f"Su 2012, Theorem 5); the search {eps_search:g} ({steps} exponential-mechanism "
        f"steps of {eps_step:g}); the output: {how}"
    )
    if not covered:
        guarantee = (
            "NOT covered by epsilon: the released transformation is the visited one with the "
            "highest exact score (output: best_exact, as ARX does); that comparison reads the "
            f"data without noise, so the ({total:g}, {delta:g}) accounting of the sampling and "
            "the search does not cover the release. Use output: exponential (the default) or "
            "last for a release the guarantee covers"
        )
    insecure = randomness == INSECURE_KIND
    if insecure:  # a release both best_exact and insecure says both
        guarantee = f"{NOT_PRIVATE}. {guarantee}"
    return {
        "guarantee": guarantee,
        "private": covered and not insecure,
        "covered_by_epsilon": covered,
        "randomness": randomness,
        "output": output,
        "epsilon": total if covered else None,
        "delta": delta if covered else None,
        "accounting": accounting,
        "source": "Bild, Kuhn & Prasser 2018; Dwork & Roth 2014, Theorem 3.16",
    }


def _sample(n: int, beta: float, rnd: Any) -> np.ndarray:
    """Exact Bernoulli(beta) per record: a uniform integer below 2**53 below beta * 2**53."""
    from sdckit.models.differential_privacy import BETA_BITS

    threshold = int(round(beta * float(1 << BETA_BITS)))  # beta is a multiple of 2**-53
    if n == 0:
        return np.zeros(0, dtype=bool)
    return rnd.below(1 << BETA_BITS, n) < threshold


def _released(
    data: pd.DataFrame,
    schema: Schema,
    keep: np.ndarray,
    base: FrequencySet | None,
    levels: Sequence[int],
    small: np.ndarray | None,
    fs: FrequencySet | None,
) -> tuple[pd.DataFrame, dict[str, np.ndarray], np.ndarray]:
    """The released rows: sampled records of classes of at least k records generalized to
    ``levels``; every other record suppressed ('*' in every quasi-identifier)."""
    n = len(data)
    supp = np.ones(n, dtype=bool)
    rows = np.flatnonzero(keep)
    if base is not None and fs is not None and small is not None:
        row_class = fs.row_class()
        supp[rows] = small[row_class]
    out = data.copy(deep=False)
    share: dict[str, np.ndarray] = {}
    for i, q in enumerate(schema.quasi_identifiers):
        h = schema.hierarchy(q)
        assert h is not None
        level = int(levels[i])
        labels = np.asarray(h.labels[level], dtype=object)
        where_star = np.flatnonzero(labels == SUPPRESSED)
        cats = labels if where_star.size else np.append(labels, SUPPRESSED)
        star = int(where_star[0]) if where_star.size else len(labels)
        codes = np.full(n, star, dtype=np.int32)
        col_share = np.ones(n, dtype=np.float64)
        if base is not None:
            qi = base.quasi_identifiers[i]
            at = qi.codes_at(level)
            codes[rows] = at
            col_share[rows] = (h.leaves_under(level).astype(float) / len(h.leaves))[at]
        codes[supp] = star
        col_share[supp] = 1.0
        col = pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object)))
        col.index = data.index
        out[q] = col
        share[q] = col_share
    return out, share, supp


def safepub(
    data: pd.DataFrame,
    schema: Schema,
    models: Sequence[PrivacyModel],
    *,
    suppression_limit: float = 1.0,
    metric: str | Mapping[str, Any] | None = None,
    seed: int | np.random.Generator | None = None,
    progress: Callable[[int, int], Any] | None = None,
    accountant: Any = None,
    **options: Any,
) -> AlgorithmOutput:
    """SafePub (Bild, Kuhn & Prasser 2018): sample, search privately, suppress classes < k.

    ``models`` is ``[DifferentialPrivacy(epsilon, delta, epsilon_search)]``; every
    quasi-identifier needs a hierarchy. Options (:class:`~sdckit.algorithms.options.
    SafePubOptions`): ``search_steps`` (default 100, as ARX), ``score`` (``loss``, the
    default as in ARX, ``discernibility`` or ``aecs``) and ``output`` (``exponential``, the
    default, ``last`` or ``best_exact``; module docstring, step 4). The random sampling and the
    search are the privacy mechanism: they draw from the operating system's CSPRNG whatever
    ``seed`` says (:func:`sdckit.dp.randomness.noise_source`; a job's seed is no secret); only
    the option ``insecure_reproducible_noise: true`` (tests) draws them from ``seed``, and
    ``details["privacy"]`` then says the release is not private (``private`` false, the
    guarantee starting with NOT PRIVATE). ``accountant`` (an :class:`sdckit.dp.Accountant`) is
    charged ``(epsilon_anon, delta)`` for the sampling and k-anonymization and its share of
    ``epsilon_search`` per exponential-mechanism selection (:func:`selection_count`); without
    one, a private accountant of exactly ``(epsilon, delta)`` is used. The check that the whole
    cost fits is made before anything is drawn.

    The records not drawn and those in classes of fewer than ``k`` sampled records are
    suppressed (their row is kept with '*' in every quasi-identifier, ARX's convention), so
    the release's suppression is the algorithm's own: ``suppression_limit`` does not apply
    (ARX runs its differential privacy model with a 100% limit). ``metric`` is refused: the
    score option steers the search. ``details`` holds the parameters, the search path (the
    pivots' levels) and the counts the report shows.
    """
    from sdckit.algorithms.optimal import prepare_base, require_hierarchies
    from sdckit.dp.accountant import Accountant, BudgetExhausted, PrivacyCost
    from sdckit.dp.randomness import noise_source
    from sdckit.dp.selection import exponential

    if metric is not None:
        name = getattr(metric, "name", metric)
        raise ConfigError(
            f"safepub: a metric ({name!r}) does not steer SafePub; choose its score function "
            f"with the option 'score' ({', '.join(SCORES)}); every metric of the result is "
            "reported either way"
        )
    opts = parse_options("safepub", options)
    assert isinstance(opts, SafePubOptions)
    model = _model(models)
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"safepub: data must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise DataError("the data has no records; nothing to anonymize")
    del suppression_limit  # the release's suppression is SafePub's own (docstring)
    qis = require_hierarchies(schema)
    params = model.parameters
    beta, k = params.beta, params.k
    eps_anon = model.epsilon_anon
    eps_search = float(model.epsilon_search)
    steps = int(opts.search_steps)
    selections = selection_count(steps, opts.output)
    eps_step = eps_search / selections
    delta = float(model.delta)
    if accountant is None:
        accountant = Accountant(float(model.epsilon), delta)
    elif not isinstance(accountant, Accountant):
        raise ParameterError(
            f"safepub: accountant must be an sdckit.dp.Accountant, got {type(accountant).__name__}"
        )
    whole = PrivacyCost.approximate(eps_anon + eps_search, delta)
    if not accountant.can_afford(whole):
        raise BudgetExhausted(
            f"safepub: the release costs epsilon={eps_anon + eps_search:g}, delta={delta:g}, "
            f"more than the accountant has left ({accountant!r}); nothing was drawn"
        )
    rnd = noise_source(seed, insecure_reproducible_noise=opts.insecure_reproducible_noise)

    # 1. sampling (charged before the draw)
    accountant.charge(
        PrivacyCost.approximate(eps_anon, delta), "safepub sampling + k-anonymization"
    )
    n = len(data)
    keep = _sample(n, beta, rnd)
    n_sampled = int(keep.sum())
    heights = [schema.hierarchy(q).height for q in qis]  # type: ignore[union-attr]
    top = tuple(h - 1 for h in heights)
    path: list[list[int]] = [list(top)]
    steps_run = 0
    scored = 0
    base = fs = None
    small = None
    if n_sampled == 0:  # nothing drawn: the release is empty whatever the transformation
        chosen = top
    else:
        sample = data.iloc[np.flatnonzero(keep)]
        base, _ = prepare_base(sample, schema, [])
        hierarchies = [schema.hierarchy(q) for q in qis]
        shares = [
            [h.leaves_under(level).astype(np.float64) / len(h.leaves) for level in range(h.height)]
            for h in hierarchies
            if h is not None
        ]
        cache: dict[tuple[int, ...], float] = {}

        def score_of(node: tuple[int, ...]) -> float:
            if node not in cache:
                cache[node] = score_node(base.rollup(node), opts.score, k, n, shares)[0]
            return cache[node]

        pivot = top
        best, best_score = top, score_of(top)
        candidates: dict[tuple[int, ...], float] = {top: best_score}
        for step in range(1, steps + 1):
            if progress is not None:
                progress(step - 1, steps)
            for i, level in enumerate(pivot):
                if level > 0:
                    pred = (*pivot[:i], level - 1, *pivot[i + 1 :])
                    if pred not in candidates:
                        candidates[pred] = score_of(pred)
            candidates.pop(pivot, None)
            if not candidates:  # the whole lattice was visited
                break
            nodes = list(candidates)
            picked = exponential(
                [candidates[c] for c in nodes],
                1,
                eps_step,
                accountant=accountant,
                seed=rnd,
            )
            pivot = nodes[int(picked.value)]
            steps_run = step
            path.append(list(pivot))
            if candidates[pivot] > best_score:
                best, best_score = pivot, candidates[pivot]
        if progress is not None:
            progress(steps, steps)
        if opts.output == "best_exact":
            chosen = best
        elif opts.output == "last":
            chosen = pivot
        else:  # a final exponential-mechanism choice among the visited pivots (step 4)
            visited = list(dict.fromkeys(tuple(p) for p in path))
            picked = exponential(
                [cache[v] for v in visited],
                1,
                eps_step,
                accountant=accountant,
                seed=rnd,
            )
            chosen = visited[int(picked.value)]
        scored = len(cache)
        fs = base.rollup(chosen)
        _, small = score_node(fs, opts.score, k, n, shares)
    released, share, supp = _released(data, schema, keep, base, chosen, small, fs)
    spent = accountant.spent()
    privacy = _privacy(
        opts.output,
        eps_anon,
        eps_search,
        delta,
        beta,
        k,
        steps_run,
        eps_step,
        n_sampled > 0,
        rnd.kind,
    )
    details = {
        "algorithm": "safepub",
        "epsilon": float(model.epsilon),
        "epsilon_anon": eps_anon,
        "epsilon_search": eps_search,
        "epsilon_per_step": eps_step,
        "epsilon_final_choice": eps_step if opts.output == "exponential" else 0.0,
        "delta": delta,
        "delta_k": params.delta_k,
        "beta": beta,
        "k": k,
        "search_steps": steps,
        "steps_run": steps_run,
        "score": opts.score,
        "output": opts.output,
        "search_path": path,
        "quasi_identifiers": list(qis),
        "lattice_size": int(math.prod(heights)),
        "transformations_scored": scored,
        "records": n,
        "records_sampled": n_sampled,
        "records_not_sampled": n - n_sampled,
        "records_suppressed_small_classes": int(supp.sum()) - (n - n_sampled),
        "records_suppressed": int(supp.sum()),
        "accountant_spent": {"epsilon": spent.epsilon, "delta": spent.delta},
        "randomness": rnd.kind,
        "guarantee": privacy["guarantee"],
        "covered_by_epsilon": privacy["covered_by_epsilon"],
        "privacy": privacy,
        "note": (
            "records_sampled and the suppression counts are computed from the data and are "
            "not covered by the privacy guarantee: do not publish them with the release"
        ),
    }
    return AlgorithmOutput(
        data=released,
        share=share,
        suppressed=supp,
        transformation=dict(zip(qis, (int(x) for x in chosen), strict=True)),
        nodes_checked=scored,
        details=details,
    )
