"""The scorecard's checks of the theorems: each evaluates the asymptotic objective (``cldiv.theory``)
at the paper's setting, tau = 0.3 and kappa = 1/tau (Section 3), and returns an ``Assessment``
whose verdict is "reproduced" when every check holds. Each takes a few seconds.
"""

from __future__ import annotations

import time

from cldiv.theory import (asymptotic_objective, identity_cross_entropy, monte_carlo_infonce, SmoothPerturbation,
                          h_lambda, random_orthogonal, vmf_entropy, minimise_witness, restricted_entropy,
                          FibreRotation, compose)
from cldiv.runs.store import ResultStore
from cldiv.runs.verdicts import Assessment, claim_verdict

#: The paper's setting for the theorem checks: tau = 0.3, kappa = 1 / tau (Section 3).
TAU = 0.3
KAPPA = 1.0 / TAU


def _theory(checks: list[tuple[bool, str]], paper: str, method: str, start: float) -> Assessment:
    """A theorem's assessment: reproduced iff every check holds; budget = method and time taken."""
    verdict = claim_verdict(len(checks), len(checks), sum(ok for ok, _ in checks))
    budget = f"{method}, {time.perf_counter() - start:.1f} s at build"
    return Assessment(verdict, budget, paper, "; ".join(text for _, text in checks))


QUADRATURE = "quadrature on S² (error < 1e-10)"

#: What each theorem states, in the scorecard's words (the "paper" column).
STATEMENTS = {
    "Theorem 3.3": "L − log M → E H(P, Q_h) − log|Z|; for h = I, argmin over τ at 1/κ = 0.3",
    "Theorem 4.4": "the global minimisers are h(z) = Az, A ∈ O(3)",
    "Theorem 4.5": "some h_λ, λ < 1, has a lower loss than every orthogonal map",
    "Theorem 4.6 / A.4": "every h ∈ O(3) is a global minimiser (κτ = 1)",
    "Theorem A.5": "L(h ∘ m) = L(h): the corrected loss does not select O(3)",
}


def assess_theorem_3_3(store: ResultStore) -> Assessment:
    """Thm 3.3: InfoNCE - log M -> cross-entropy - log|Z|; for h = I minimised over tau at 1/kappa."""
    from scipy.optimize import minimize_scalar

    start = time.perf_counter()
    closed = float(identity_cross_entropy(KAPPA, TAU))
    limit = asymptotic_objective(lambda z: z, KAPPA, TAU, method="sphere")
    finite = monte_carlo_infonce(lambda z: z, KAPPA, TAU, 4096, n_anchors=500, n_repeats=10, seed=0)
    best = minimize_scalar(lambda t: float(identity_cross_entropy(KAPPA, t)), bounds=(0.05, 3.0),
                           method="bounded", options={"xatol": 1e-8})
    return _theory([
        (abs(finite.mean - limit.infonce_limit) < 3 * finite.standard_error + 0.01,
         f"L − log M at M = 4096: {finite.mean:.3f} ± {finite.standard_error:.3f}, "
         f"limit {limit.infonce_limit:.3f}"),
        (abs(limit.value - closed) < 1e-6, f"cross-entropy {limit.value:.4f} = closed form {closed:.4f}"),
        (abs(best.x - 1 / KAPPA) < 1e-4, f"argmin τ = {best.x:.4f}"),
    ], STATEMENTS["Theorem 3.3"],
        "quadrature + Monte Carlo (10 × 500 anchors, M = 4096)", start)


def assess_theorem_4_4(store: ResultStore) -> Assessment:
    """Thm 4.4: under diversity every orthogonal h attains the minimum, non-orthogonal ones do not."""
    start = time.perf_counter()
    minimum = vmf_entropy(KAPPA)

    def excess(h) -> float:
        return asymptotic_objective(h, KAPPA, TAU).value - minimum

    orthogonal = max(abs(excess(random_orthogonal(seed, reflection=seed == 1))) for seed in range(2))
    others = {"h_λ (λ = 0.8)": excess(h_lambda(0.8)), "smooth perturbation": excess(SmoothPerturbation(0.2))}
    return _theory([
        (orthogonal < 1e-6, f"orthogonal maps: L − H(vMF) = {orthogonal:.0e}"),
        (min(others.values()) > 1e-4, ", ".join(f"{k}: +{v:.4f}" for k, v in others.items())),
    ], STATEMENTS["Theorem 4.4"], QUADRATURE, start)


def assess_theorem_4_5(store: ResultStore) -> Assessment:
    """Thm 4.5: restricted positives, full-sphere negatives: h_lambda with lambda < 1 beats O(3)."""
    start = time.perf_counter()
    identity = asymptotic_objective(h_lambda(1.0), KAPPA, TAU, conditional="restricted").value
    lam, best = minimise_witness(KAPPA, TAU, conditional="restricted", negatives="sphere")
    return _theory([
        (lam < 1.0, f"λ* = {lam:.3f}"),
        (best.value < identity - 1e-6, f"L(h_λ*) − L(I) = {best.value - identity:.4f}"),
    ], STATEMENTS["Theorem 4.5"], QUADRATURE, start)


def assess_theorem_4_6(store: ResultStore) -> Assessment:
    """Thm 4.6 / A.4: support-corrected loss: orthogonal maps are global minimisers when kappa tau = 1."""
    start = time.perf_counter()
    minimum = restricted_entropy(KAPPA)
    setting = dict(conditional="restricted", negatives="fibre")
    orthogonal = max(abs(asymptotic_objective(random_orthogonal(seed), KAPPA, TAU, **setting).value - minimum)
                     for seed in range(2))
    lam, _ = minimise_witness(KAPPA, TAU, **setting)
    return _theory([
        (orthogonal < 1e-6, f"orthogonal maps: L − E H(P^K) = {orthogonal:.0e}"),
        (abs(lam - 1.0) < 1e-3, f"best h_λ at λ = {lam:.3f}"),
    ], STATEMENTS["Theorem 4.6 / A.4"], QUADRATURE, start)


def assess_theorem_a5(store: ResultStore) -> Assessment:
    """Thm A.5: a measure- and conditional-preserving m leaves the support-corrected loss unchanged."""
    start = time.perf_counter()
    setting = dict(conditional="restricted", negatives="fibre", method="sphere")
    twist = FibreRotation(1.0)  # m: rotate each fibre K(z) by u radians, not linear
    diffs = [abs(asymptotic_objective(compose(h, twist), KAPPA, TAU, **setting).value
                 - asymptotic_objective(h, KAPPA, TAU, **setting).value)
             for h in (lambda z: z, random_orthogonal(0))]
    return _theory([(max(diffs) < 1e-6, f"|L(h ∘ m) − L(h)| = {max(diffs):.0e} for a non-linear m")],
                   STATEMENTS["Theorem A.5"], QUADRATURE, start)
