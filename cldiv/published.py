"""Every number typed from the paper, once, with the table or figure it comes from (and, for Table 7,
from the authors' results file that holds its means: ``TABLE7_CODE_LOG``).

Zaliaduonis, Putzky, Richter, Gatidis, *The Loss Is Not Enough* (ICML 2026): mean and standard
deviation over the paper's 5 runs. Nothing here is computed; everything else in cldiv and the book
that shows a published number reads it from this module.

Synthetic benchmark (Section 3): APE in the authors' code's convention (all n^2 pairs, divided
by 2); None = N/A (the Invertible MLP has no inverse encoder). CIFAR-10 (Figure 3): linear-probe
accuracy in %, best probe epoch; the ViT values are read off the figure (no sd published: None).
"""

from __future__ import annotations

#: Table 1: R^2 per process and column (holds, violated, adapted, inverse = + inductive bias).
TABLE1_R2 = {
    "identity": {"holds": (1.00, 0.00), "violated": (0.06, 0.03), "adapted": (0.63, 0.00), "inverse": (0.99, 0.00)},
    "invertible_mlp": {"holds": (1.00, 0.00), "violated": (0.13, 0.12), "adapted": (0.60, 0.01), "inverse": None},
    "linear": {"holds": (1.00, 0.00), "violated": (0.05, 0.06), "adapted": (0.65, 0.03), "inverse": (0.99, 0.00)},
    "patches": {"holds": (0.99, 0.00), "violated": (0.25, 0.03), "adapted": (0.63, 0.02), "inverse": (0.88, 0.01)},
    "spiral": {"holds": (1.00, 0.00), "violated": (0.72, 0.33), "adapted": (0.62, 0.01), "inverse": (1.00, 0.00)},
}
#: Table 3 (diversity holds, MLP): (MCC, APE, final loss) per process.
TABLE3 = {
    "identity": ((0.775, 0.060), (0.007, 0.001), (7.388, 0.007)),
    "linear": ((0.854, 0.083), (0.007, 0.001), (7.386, 0.006)),
    "invertible_mlp": ((0.822, 0.038), (0.010, 0.002), (7.383, 0.012)),
    "patches": ((0.836, 0.060), (0.031, 0.001), (7.429, 0.019)),
    "spiral": ((0.858, 0.041), (0.012, 0.001), (7.390, 0.011)),
}
#: Tables 4-6 (diversity violated): metric -> process -> (violated, adapted, inverse).
TABLES4_6 = {
    "mcc": {
        "identity": ((0.143, 0.016), (0.607, 0.039), (0.801, 0.102)),
        "linear": ((0.111, 0.075), (0.592, 0.085), (0.841, 0.094)),
        "invertible_mlp": ((0.178, 0.116), (0.569, 0.048), None),
        "patches": ((0.265, 0.018), (0.624, 0.035), (0.687, 0.014)),
        "spiral": ((0.629, 0.294), (0.602, 0.044), (0.999, 0.001)),
    },
    "ape_code": {
        "identity": ((0.322, 0.007), (0.152, 0.002), (0.047, 0.000)),
        "linear": ((0.325, 0.012), (0.155, 0.002), (0.046, 0.000)),
        "invertible_mlp": ((0.305, 0.034), (0.168, 0.003), None),
        "patches": ((0.283, 0.008), (0.154, 0.002), (0.109, 0.003)),
        "spiral": ((0.136, 0.115), (0.156, 0.002), (0.016, 0.003)),
    },
    "final_loss": {
        "identity": ((5.709, 0.000), (6.689, 0.007), (6.058, 0.009)),
        "linear": ((5.708, 0.001), (6.697, 0.005), (6.043, 0.009)),
        "invertible_mlp": ((5.715, 0.002), (6.009, 0.006), None),
        "patches": ((5.850, 0.021), (6.028, 0.009), (6.222, 0.007)),
        "spiral": ((5.949, 0.140), (6.011, 0.012), (6.075, 0.014)),
    },
}
#: Figure 5a: mean R^2 over processes, per encoder and condition.
FIGURE5A = {"mlp": {"holds": 1.00, "violated": 0.25}, "inverse": {"holds": 0.79, "violated": 0.83}}

#: Table 7 (progressive violation on S^9, Section 4): R^2 per process for d_fixed = 0, 1, ..., 10, in the
#: authors' code's evaluation (fitted and scored on the same 2000 points) and, at d_fixed = 9, its fair
#: sign coin for the free coordinate.
TABLE7_R2 = {
    "injective_linear": ((0.969, 0.047), (0.023, 0.011), (0.014, 0.003), (0.027, 0.009), (0.061, 0.021), (0.099, 0.019),
                         (0.168, 0.017), (0.213, 0.035), (0.238, 0.049), (0.299, 0.047), (0.032, 0.004)),
    "monomial": ((0.990, 0.000), (0.015, 0.005), (0.015, 0.003), (0.034, 0.008), (0.042, 0.004), (0.097, 0.015),
                 (0.185, 0.021), (0.284, 0.022), (0.348, 0.022), (0.425, 0.056), (0.086, 0.032)),
}

#: The authors' results file behind Table 7 (their 10-D script's averages file,
#: ``experiments/diversity_violated/experiment_results_10d/progressive_d_fixed_10d_70d_averages_20250814_061808.csv``,
#: whose R^2 means are Table 7's; PAPER.md, Section 4). Per process, for d_fixed = 0..10, the means over its
#: 5 runs of (the last training-batch loss the script logged, the mean of all the training-batch losses it
#: logged, the mean of all the in-sample R^2 it logged on the training batch), every logged value taken at
#: one of the script's 100 iterations. Not in the paper; typed from that file, rounded to 3 decimals.
TABLE7_CODE_LOG = {
    "injective_linear": ((7.130, 7.156, 0.944), (4.846, 4.939, 0.030), (4.811, 4.845, 0.026), (4.809, 4.831, 0.049),
                         (4.809, 4.826, 0.099), (4.809, 4.823, 0.151), (4.809, 4.820, 0.218), (4.809, 4.817, 0.266),
                         (4.809, 4.814, 0.304), (4.809, 4.813, 0.380), (4.809, 4.809, 0.073)),
    "monomial": ((7.118, 7.141, 0.973), (4.858, 4.944, 0.029), (4.813, 4.846, 0.026), (4.810, 4.833, 0.059),
                 (4.809, 4.828, 0.075), (4.809, 4.825, 0.150), (4.809, 4.822, 0.245), (4.809, 4.818, 0.342),
                 (4.809, 4.814, 0.405), (4.809, 4.814, 0.469), (4.254, 4.774, 0.108)),
}

#: Table 8 (constraint-ratio sweep, Section 4): mean R^2 over 5 runs (no standard deviations published) per
#: (process, encoder) for rho = 0, 0.1, ..., 1.0 (``TABLE8_RHOS``).
TABLE8_RHOS = tuple(round(0.1 * i, 1) for i in range(11))
TABLE8_R2 = {
    ("identity", "mlp"): (0.053, 0.228, 0.306, 0.226, 0.502, 0.575, 0.525, 0.469, 0.402, 0.440, 0.626),
    ("identity", "inverse"): (0.994, 0.997, 0.999, 1.000, 0.999, 0.997, 0.991, 0.979, 0.958, 0.905, 0.709),
    ("linear", "mlp"): (0.112, 0.293, 0.299, 0.201, 0.452, 0.487, 0.461, 0.333, 0.350, 0.457, 0.650),
    ("linear", "inverse"): (0.995, 0.997, 0.999, 1.000, 0.999, 0.997, 0.991, 0.979, 0.958, 0.904, 0.680),
    ("invertible_mlp", "mlp"): (0.286, 0.317, 0.350, 0.554, 0.666, 0.544, 0.564, 0.524, 0.485, 0.487, 0.597),
    ("patches", "mlp"): (0.265, 0.651, 0.763, 0.820, 0.745, 0.737, 0.719, 0.731, 0.681, 0.675, 0.633),
    ("patches", "inverse"): (0.871, 0.892, 0.878, 0.870, 0.859, 0.819, 0.645, 0.674, 0.680, 0.623, 0.656),
    ("spiral", "mlp"): (0.331, 0.731, 0.622, 0.797, 0.813, 0.822, 0.803, 0.661, 0.620, 0.637, 0.624),
    ("spiral", "inverse"): (0.996, 0.781, 0.963, 0.999, 0.842, 0.991, 0.831, 0.846, 0.826, 0.811, 0.572),
}

#: Tables 10 and 11 (constraint-ratio sweep): mean APE (the code's convention: all n^2 pairs, divided by 2) and
#: mean final loss (the code's last training-batch loss, 2000 negatives per anchor, 1000 for some processes) over 5 runs, per (process,
#: encoder) at rho = 0, 0.5, 1 (``TABLE10_11_RHOS``; the other rho values are not in the digest).
TABLE10_11_RHOS = (0.0, 0.5, 1.0)
TABLE10_APE = {
    ("identity", "mlp"): (0.325, 0.202, 0.152), ("identity", "inverse"): (0.047, 0.034, 0.155),
    ("linear", "mlp"): (0.310, 0.223, 0.155), ("linear", "inverse"): (0.046, 0.034, 0.158),
    ("invertible_mlp", "mlp"): (0.265, 0.204, 0.168),
    ("patches", "mlp"): (0.280, 0.149, 0.154), ("patches", "inverse"): (0.112, 0.122, 0.160),
    ("spiral", "mlp"): (0.257, 0.120, 0.156), ("spiral", "inverse"): (0.027, 0.027, 0.190),
}
TABLE11_LOSS = {
    ("identity", "mlp"): (5.71, 6.46, 6.69), ("identity", "inverse"): (6.05, 6.53, 6.69),
    ("linear", "mlp"): (5.71, 6.47, 6.70), ("linear", "inverse"): (6.05, 6.53, 6.69),
    ("invertible_mlp", "mlp"): (5.03, 5.78, 6.01),
    ("patches", "mlp"): (5.17, 5.83, 6.03), ("patches", "inverse"): (6.19, 6.60, 6.79),
    ("spiral", "mlp"): (5.07, 5.79, 6.01), ("spiral", "inverse"): (6.07, 6.52, 6.94),
}

#: Figure 3: SimCLR linear-probe accuracy (%) on CIFAR-10, (encoder, regime) -> (mean, sd or None).
FIGURE3: dict[tuple[str, str], tuple[float, float | None]] = {
    ("resnet18", "all"): (55.4, 1.3), ("resnet18", "crop"): (37.2, 0.5), ("resnet18", "no_crop"): (35.5, 0.6),
    ("vit", "all"): (54.0, None), ("vit", "crop"): (41.0, None), ("vit", "no_crop"): (32.0, None),
    ("mlp", "all"): (42.3, 0.9), ("mlp", "crop"): (39.9, 0.1), ("mlp", "no_crop"): (33.0, 0.2),
}


def published(metric: str, column: str, process: str) -> tuple[float, float] | None:
    """The paper's (mean, std) of ``metric`` for a cell, or None where it has no number.

    metric: "r2" (Table 1), "mcc", "ape_code", "final_loss" (Tables 3-6).
    """
    if metric == "r2":
        return TABLE1_R2.get(process, {}).get(column)
    if column == "holds":
        index = {"mcc": 0, "ape_code": 1, "final_loss": 2}.get(metric)
        return None if index is None or process not in TABLE3 else TABLE3[process][index]
    index = {"violated": 0, "adapted": 1, "inverse": 2}.get(column)
    rows = TABLES4_6.get(metric, {})
    return None if index is None or process not in rows else rows[process][index]
