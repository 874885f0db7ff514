"""Identifiability metrics for a recovery map h = f ∘ g (paper Appendix D).

Every metric compares the true latents z (points on S^{k-1}) with the encoder's output
ẑ = h(z). Identifiability under the paper's assumptions (Theorem 4.4) means h(z) = A z with
A ∈ O(k); each metric measures a different consequence of that:

- :func:`affine_r2` -- an affine map recovers z from ẑ (R^2 = 1 for any invertible affine h);
- :func:`mean_correlation_coefficient` -- dimensions match one-to-one (MCC = 1 only for a
  signed permutation; a generic rotation gives MCC < 1 even though R^2 = 1);
- :func:`angle_preservation_error` -- pairwise inner products are preserved (APE = 0 exactly
  for orthogonal h, which is the property the proof of Theorem 4.4 establishes).

Inputs may be torch tensors or numpy arrays; they are converted to float64 numpy arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

__all__ = [
    "APE_CONVENTIONS",
    "affine_r2",
    "angle_preservation_error",
    "mean_correlation_coefficient",
]

#: Allowed values of ``convention`` in :func:`angle_preservation_error`.
APE_CONVENTIONS = ("paper", "code")

# Rows of the n x n Gram matrices processed at once by ``angle_preservation_error``:
# keeps peak memory at about 2 * _APE_CHUNK_ROWS * n float64 values.
_APE_CHUNK_ROWS = 1024


def _as_2d_float64(array: Any, name: str) -> np.ndarray:
    """Convert a tensor or array to a float64 numpy array of shape (n, d), or raise."""
    if hasattr(array, "detach"):  # torch.Tensor, without importing torch here
        array = array.detach().cpu().numpy()
    out = np.asarray(array, dtype=np.float64)
    if out.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n, dim); got {out.ndim}-D with shape {out.shape}"
        )
    return out


def _check_same_n(a: np.ndarray, a_name: str, b: np.ndarray, b_name: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{a_name} and {b_name} must have the same number of rows n; "
            f"got {a.shape[0]} and {b.shape[0]}"
        )


def affine_r2(
    features: Any,
    latents: Any,
    *,
    test_features: Any | None = None,
    test_latents: Any | None = None,
) -> float:
    """Coefficient of determination of an affine regression from features to latents (App. D).

    Fits ``z ≈ W ẑ + b`` by least squares (``sklearn.linear_model.LinearRegression``) and returns

        R^2 = 1 - SS_res / SS_tot,

    computed per latent coordinate and averaged uniformly over the k coordinates
    (``sklearn.metrics.r2_score``, ``multioutput="uniform_average"``). R^2 = 1 means z is an
    affine function of h(z), as it is for every orthogonal recovery map (Theorem 4.4).

    Where the regression is scored:

    - with ``test_features`` and ``test_latents`` given, it is fitted on
      (``features``, ``latents``) and scored on the held-out pair (the book's default);
    - without them it is fitted **and scored on the same points** (in-sample), which is the
      convention of the authors' code (2000 points). In-sample R^2 is never below the
      held-out value in expectation and is optimistic when d is large relative to n.

    Args:
        features: (n, d) encoder outputs ẑ = h(z) used to fit the regression.
        latents: (n, k) true latents z for the same points.
        test_features: optional (n_test, d) held-out encoder outputs.
        test_latents: optional (n_test, k) held-out latents; give both test arrays or neither.

    Returns:
        R^2 averaged over the k latent coordinates (at most 1; can be negative held-out).
    """
    x = _as_2d_float64(features, "features")
    y = _as_2d_float64(latents, "latents")
    _check_same_n(x, "features", y, "latents")
    if (test_features is None) != (test_latents is None):
        raise ValueError(
            "test_features and test_latents must be given together (both or neither); "
            f"got test_features={'None' if test_features is None else 'array'}, "
            f"test_latents={'None' if test_latents is None else 'array'}"
        )
    if test_features is None:
        x_eval, y_eval = x, y
    else:
        x_eval = _as_2d_float64(test_features, "test_features")
        y_eval = _as_2d_float64(test_latents, "test_latents")
        _check_same_n(x_eval, "test_features", y_eval, "test_latents")
        if x_eval.shape[1] != x.shape[1]:
            raise ValueError(
                f"test_features must have d={x.shape[1]} columns like features; "
                f"got {x_eval.shape[1]}"
            )
        if y_eval.shape[1] != y.shape[1]:
            raise ValueError(
                f"test_latents must have k={y.shape[1]} columns like latents; "
                f"got {y_eval.shape[1]}"
            )
    regression = LinearRegression().fit(x, y)
    return float(r2_score(y_eval, regression.predict(x_eval), multioutput="uniform_average"))


def mean_correlation_coefficient(features: Any, latents: Any) -> float:
    """Mean absolute Pearson correlation after optimal matching of dimensions (App. D).

    Computes the (d, k) matrix C of Pearson correlations between each feature dimension
    ẑ_a and each latent dimension z_b, finds the one-to-one matching of dimensions that
    maximises sum |C_ab| (Hungarian algorithm, ``scipy.optimize.linear_sum_assignment``),
    and returns the mean |C_ab| over the matched pairs. If d != k, min(d, k) pairs are
    matched and the surplus dimensions are ignored. A constant (zero-variance) dimension
    has correlation 0 with everything.

    MCC = 1 when h is a signed permutation of coordinates. On the sphere recovery is only
    up to an orthogonal map A (Theorem 4.4), and a generic rotation mixes coordinates, so
    MCC < 1 even when R^2 ≈ 1 (the paper's Table 3 reports MCC ≈ 0.8 with R^2 = 1.00).

    Args:
        features: (n, d) encoder outputs ẑ = h(z).
        latents: (n, k) true latents z.

    Returns:
        Mean |Pearson correlation| over the min(d, k) matched pairs, in [0, 1].
    """
    x = _as_2d_float64(features, "features")
    y = _as_2d_float64(latents, "latents")
    _check_same_n(x, "features", y, "latents")
    if x.shape[0] < 2:
        raise ValueError(f"features and latents need n >= 2 rows for a correlation; got n={x.shape[0]}")
    x_centred = x - x.mean(axis=0)
    y_centred = y - y.mean(axis=0)
    x_norm = np.linalg.norm(x_centred, axis=0)
    y_norm = np.linalg.norm(y_centred, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = (x_centred.T @ y_centred) / np.outer(x_norm, y_norm)
    abs_correlation = np.abs(np.nan_to_num(correlation, nan=0.0, posinf=0.0, neginf=0.0))
    rows, cols = linear_sum_assignment(abs_correlation, maximize=True)
    return float(abs_correlation[rows, cols].mean())


def angle_preservation_error(latents: Any, features: Any, *, convention: str = "paper") -> float:
    """Angle preservation error: how far h is from preserving inner products (App. D).

    For unit vectors z_i (true latents) and ẑ_i = h(z_i) (encoder outputs),

    - ``convention="paper"``: APE = 1/(n(n-1)) sum_{i != j} |z_i·z_j - ẑ_i·ẑ_j|, in [0, 2];
    - ``convention="code"`` (the authors' code): the mean over all n^2 pairs *including* the
      diagonal, divided by 2, in [0, 1]. For unit vectors the diagonal terms vanish, so
      code = paper * (n - 1) / (2 n). The paper's Tables 3-6 report the code convention.

    APE = 0 exactly when h preserves all pairwise inner products, i.e. for h ∈ O(k), the
    identifiability class of Theorem 4.4. Gram matrices are built in row chunks, so memory
    stays O(chunk * n) rather than O(n^2).

    Args:
        latents: (n, k) true latents z, unit vectors.
        features: (n, d) encoder outputs ẑ, unit vectors (d may differ from k).
        convention: ``"paper"`` or ``"code"``, see above.

    Returns:
        The angle preservation error under the chosen convention.
    """
    if convention not in APE_CONVENTIONS:
        raise ValueError(f"convention must be one of {APE_CONVENTIONS}; got {convention!r}")
    z = _as_2d_float64(latents, "latents")
    z_hat = _as_2d_float64(features, "features")
    _check_same_n(z, "latents", z_hat, "features")
    n = z.shape[0]
    if convention == "paper" and n < 2:
        raise ValueError(f"latents and features need n >= 2 rows for pairs i != j; got n={n}")
    if n == 0:
        raise ValueError("latents and features must have at least one row; got n=0")

    total = 0.0
    for start in range(0, n, _APE_CHUNK_ROWS):
        stop = min(start + _APE_CHUNK_ROWS, n)
        total += float(np.abs(z[start:stop] @ z.T - z_hat[start:stop] @ z_hat.T).sum())
    if convention == "code":
        return total / (2.0 * n * n)
    diagonal = float(np.abs(np.einsum("ij,ij->i", z, z) - np.einsum("ij,ij->i", z_hat, z_hat)).sum())
    return (total - diagonal) / (n * (n - 1))
