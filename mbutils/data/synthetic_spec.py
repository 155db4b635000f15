"""What a simulated benchmark is: its shape and the parameters of a multidimensional IRT model.

The generative model
--------------------
*Models.* Model ``i`` has a size class (0.5B ... 70B), an instruct flag and a family,
drawn from fixed proportions, and an ability vector ``theta_i`` with ``D = n_dims``
coordinates. Coordinate 0 is a strong **general factor**
``g_i = ability_mean + size_slope*log2(size/7B) + instruct_shift*(instruct - 1/2)
+ family effect + ability_sd*N(0, 1)``, so accuracies are correlated across subtasks and
the many small models form a crowded middle under a tail of large ones. Coordinates
``1..D-1`` are specific abilities ``~ N(0, specific_sd^2)``.

*Items.* Item ``j`` of subtask ``t`` has discrimination ``a_j`` (general loading
``discrimination * exp(discrimination_sd * N)`` > 0; specific loadings = the subtask's
profile + ``specific_loading * N``), difficulty ``b_j = difficulty_mean + delta_t +
difficulty_sd * N``, ``n_options`` answer options and a gold position (positions are
balanced within a subtask). Subtask effects (profile, ``delta_t``) are centred across
subtasks so ``difficulty_mean`` alone sets the benchmark's level.

*Guessing floor.* A model that does not "know" item ``j`` guesses. With no position
preference and ``floor_concentration=None`` the guess is right with probability
``c = 1/options`` exactly, as in the 3PL model. Two documented extensions (off in a bare
``BenchmarkSpec``, on in all four stand-ins because real leaderboard data show both):

- ``floor_concentration``: the item's floor ``c_j ~ Beta`` with mean ``1/options``
  (attractive distractors push some items below chance; real GPQA has a quarter of its
  items answered correctly by fewer than 16% of models);
- position preferences: model ``i`` has a preference ``beta_ih`` for answer position
  ``h``, ``beta_i = position_bias_sd * N(0, I) + position_bias_shared * lambda_i * v``
  where ``v`` is one centred pattern shared by the population and ``lambda_i ~ N(0, 1)``
  how strongly (and in which sense) model ``i`` follows it. Its floor on item ``j`` is
  the softmax share of the gold position, with the gold's odds scaled by ``c_j``:
  ``c_ij = o_j e^{beta_ig} / (o_j e^{beta_ig} + sum_h e^{beta_ih} - e^{beta_ig})``,
  ``o_j = (K-1) c_j / (1-c_j)`` (so ``c_ij = c_j`` for a model without preferences).
  Gold positions are balanced, so preferences barely move a model's accuracy but they
  create the strongly anti-correlated "gold = A / gold = B ..." item clusters and the
  dominant first principal component seen in real GPQA responses.

*Responses.* ``z_ij = a_j . theta_i - b_j``, ``P_ij = c_ij + (1 - c_ij) sigmoid(z_ij)``,
``correct_ij ~ Bernoulli(P_ij)``.

*Confidence* (probability of the gold answer). The model's "sureness"
``s_ij = sigmoid(z_ij + confidence_noise * eps_ij)`` (0 = guessing, 1 = knows the answer).
A guessing model gives the gold its share of the guess distribution, ``c_ij``. A correct
answer moves the gold up from there, ``conf = c_ij + (1 - c_ij) s_ij``; a wrong answer
moves it down, ``conf = c_ij (1 - s_ij)``. So confidence lies in [0, 1], rises with
ability, is higher on correct cells (always ``>= c_ij`` there, ``<= c_ij`` on wrong ones),
and its item means track item p-values, including the below-chance distractor items
(weak models are near ``c_ij`` either way; strong models are confidently right, or,
rarely, confidently wrong).

Two further documented extensions, off unless a spec sets them: ``ability_skew`` (the
general ability's noise is skew-normal, standardised) and ``unlearnable_share`` (that share
of items, chosen at random, is answered at the guessing floor by every model: items no
model of the pool can do, as in real BBH where the strongest models still miss over a
quarter of the items).

The draws are :mod:`mbutils.data.synthetic_draws`; the four stand-ins' specs are
:mod:`mbutils.data.synthetic_standins`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mbutils.base.errors import BundleError

#: Size classes (billions of parameters) and their share of the simulated leaderboard.
SIZE_CLASSES = (0.5, 1.0, 3.0, 7.0, 13.0, 30.0, 70.0)
SIZE_SHARES = (0.06, 0.08, 0.14, 0.40, 0.14, 0.10, 0.08)
FAMILIES = ("aurora", "basalt", "cobalt", "dune", "ember", "fjord")


@dataclass(frozen=True)
class BenchmarkSpec:
    """Everything the simulator needs: shape, and the parameters of the IRT model.

    ``subtasks`` is a tuple of ``(name, n_items, n_options)``. Ability and difficulty
    parameters are on the logit scale; see the module docstring for the model.

    Parameters
    ----------
    n_models : int
        Number of simulated models (at least 2).
    subtasks : tuple of (str, int, int)
        Each subtask's name, number of items and number of answer options (at least 2: the
        guessing floor is one over it).
    n_dims, ability_mean, ability_sd, ...
        The IRT model's parameters, with defaults (the module docstring describes each); the
        shipped stand-ins' values are fitted to the real benchmarks.

    Examples
    --------
    >>> from mbutils import BenchmarkSpec, simulate
    >>> spec = BenchmarkSpec(n_models=20, subtasks=(("algebra", 30, 4), ("logic", 20, 2)))
    >>> spec.n_items, spec.subtask_names
    (50, ('algebra', 'logic'))
    >>> simulate(spec, seed=1, name="toy").correct.shape
    (20, 50)
    >>> BenchmarkSpec(n_models=1, subtasks=(("algebra", 30, 4),))
    Traceback (most recent call last):
    ...
    mbutils.base.errors.BundleError: BenchmarkSpec: n_models must be at least 2, got 1
    """

    n_models: int
    subtasks: tuple[tuple[str, int, int], ...]
    n_dims: int = 4
    ability_mean: float = 0.0
    ability_sd: float = 0.5
    ability_skew: float = 0.0
    size_slope: float = 0.35
    instruct_shift: float = 0.2
    family_sd: float = 0.15
    specific_sd: float = 0.4
    discrimination: float = 1.0
    discrimination_sd: float = 0.3
    specific_loading: float = 0.4
    subtask_profile_sd: float = 0.5
    difficulty_mean: float = 0.0
    difficulty_sd: float = 1.0
    subtask_difficulty_sd: float = 0.5
    floor_concentration: float | None = None
    unlearnable_share: float = 0.0
    position_bias_sd: float = 0.0
    position_bias_shared: float = 0.0
    confidence_noise: float = 1.0

    def __post_init__(self) -> None:
        if int(self.n_models) < 2:
            raise BundleError(f"BenchmarkSpec: n_models must be at least 2, got {self.n_models}")
        if not self.subtasks:
            raise BundleError("BenchmarkSpec: give at least one (name, n_items, n_options) subtask")
        names = [str(s[0]) for s in self.subtasks]
        if len(set(names)) != len(names):
            raise BundleError(f"BenchmarkSpec: duplicate subtask names in {names}")
        for entry in self.subtasks:
            if len(entry) != 3 or int(entry[1]) < 1 or int(entry[2]) < 2:
                raise BundleError(
                    f"BenchmarkSpec: subtask {entry!r} must be (name, n_items >= 1, n_options >= 2)"
                )
        if int(self.n_dims) < 1:
            raise BundleError(f"BenchmarkSpec: n_dims must be at least 1, got {self.n_dims}")
        for label in ("ability_sd", "family_sd", "specific_sd", "discrimination",
                      "discrimination_sd", "specific_loading", "subtask_profile_sd",
                      "difficulty_sd", "subtask_difficulty_sd", "position_bias_sd", "position_bias_shared",
                      "confidence_noise"):
            if not getattr(self, label) >= 0:
                raise BundleError(f"BenchmarkSpec: {label} must be >= 0, got {getattr(self, label)}")
        if not 0 <= self.unlearnable_share < 1:
            raise BundleError(f"BenchmarkSpec: unlearnable_share must be in [0, 1), got {self.unlearnable_share}")
        if self.floor_concentration is not None and not self.floor_concentration > 0:
            raise BundleError("BenchmarkSpec: floor_concentration must be > 0 or None")

    @property
    def n_items(self) -> int:
        return sum(int(s[1]) for s in self.subtasks)

    @property
    def subtask_names(self) -> tuple[str, ...]:
        return tuple(str(s[0]) for s in self.subtasks)
