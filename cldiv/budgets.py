"""Every experiment's named budgets, in one schema: how big each run is and how many there are.

A budget (``paper``: the paper's protocol; ``cpu``: what the committed results use; ``smoke``:
seconds, for tests) of an experiment is a ``Budget``: the config fields of every run, overrides
per group of cells (the synthetic benchmark's columns, the image encoders' sizes), the default
axes of a sweep's grid, and the runs per cell. ``overrides(experiment, budget, group)`` is what
one run of that group gets; the experiments' modules build their configs from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cldiv.config import check_choice

#: The named budgets of every experiment.
BUDGET_NAMES = ("paper", "cpu", "smoke")


@dataclass(frozen=True)
class Budget:
    """One named budget of one experiment.

    seeds: runs per cell (seeds 0 .. seeds-1); config: fields of every run; groups: fields of
    one group of cells on top of ``config``; axes: a sweep's default grid axes; rerun_at: the
    budget at whose sizes the synthetic cells that miss Table 1's shape are rerun; fp32_cells:
    (column, process) cells run in float32 whatever ``config`` says.
    """

    seeds: int
    config: Mapping[str, Any]
    groups: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    axes: Mapping[str, tuple] = field(default_factory=dict)
    rerun_at: str | None = None
    fp32_cells: tuple[tuple[str, str], ...] = ()

    def fields(self, group: str | None = None) -> dict[str, Any]:
        """The config fields a run of ``group`` (None: no group) gets: ``config``, then the group's."""
        return {**self.config, **self.groups.get(group, {})} if group else dict(self.config)


# The paper's 10-D encoder (Table 7): hidden widths of the MLP on S^9.
PAPER_10D_WIDTHS = (512, 1024, 1024, 512, 256, 128, 64, 32)
#: The paper's image-encoder sizes (width, depth): about 11M parameters each (MLP 15.7M).
PAPER_IMAGE_SIZES = {"resnet18": {"width": 64, "depth": 2}, "vit": {"width": 384, "depth": 6},
                     "mlp": {"width": 2048, "depth": 3}}

#: The experiments that have budgets, and the groups of cells each distinguishes.
GROUPS = {
    "synthetic": ("holds", "violated", "adapted", "inverse"),
    "constraint_ratio": (),
    "progressive_violation": (),
    "simclr": tuple(PAPER_IMAGE_SIZES),  # the image encoders (cldiv.images.IMAGE_ENCODERS)
}
EXPERIMENTS = tuple(GROUPS)

#: (iterations, eval_every) of every length the progressive-violation ``cpu`` budget has had or has been
#: measured at, shortest first; its chapter counts the converged runs at each that the store holds.
PROGRESSIVE_CPU_LENGTHS = ((300, 25), (3000, 100), (12000, 400), (24000, 400), (48000, 400))

BUDGETS: dict[str, dict[str, Budget]] = {
    # --- The synthetic benchmark (Section 3; Table 1, Tables 3-6, Figure 5a) -------------------
    "synthetic": {
        # The paper's protocol: batch 2000, 2000 fresh negatives, 5000 iterations, Adam lr 1e-3,
        # 5 runs. The adapted cells encode N * M = 4e6 negatives a step (GPU scale). Two choices
        # beyond the paper's text: the MLP blocks in the authors' code's order Linear -> ReLU ->
        # BatchNorm (with the paper's order the Spiral "holds" cell stalls at R^2 ~ 0.67 at the
        # paper's sizes, though violated Identity then matches its published value: the synthetic
        # chapter's block-order study), and bf16 mixed precision (half the
        # CPU time a step) except in fp32_cells, the cells in which bf16 changes a number or one of
        # the paper's orderings over every stored fp32/bf16 pair at the cpu budget's sizes
        # (cldiv.synthetic.precision.cpu_size_pairs, shown in the synthetic chapter;
        # tests/test_committed_results.py keeps the two in step).
        # The adapted column is not at the paper's sizes (N * M = 4e6 encoder points a step): it is
        # the largest size of the synthetic chapter's adapted-budget study at which every run
        # converged, 256 anchors in 64 groups x 64 negatives each, 8000 iterations (about 15 min a
        # run on one CPU core), in float32 like the study.
        "paper": Budget(
            seeds=5,
            config={"batch_size": 2000, "n_negatives": 2000, "iterations": 5000, "eval_every": 250,
                    "mlp_order": "linear_relu_bn", "precision": "bf16"},
            groups={"adapted": {"batch_size": 256, "n_negatives": 64, "anchor_groups": 64,
                                "iterations": 8000, "eval_every": 200, "precision": "fp32"}},
            fp32_cells=(("holds", "spiral"), ("adapted", "spiral")),
        ),
        # The quick re-execution path (the synthetic chapter prints the summed wall time of its
        # runs; the adapted-budget study, at 8x and 16x the adapted cells' compute, is a large
        # part). Batch and negatives 2000 -> 1024 (256 for the inverse encoders, which have a few
        # thousand parameters); iterations 5000 -> 2000 (holds) and 1000 (the rest); adapted cells
        # 16 anchors x 32 negatives each, 4000 iterations (at 400 most had not converged). At
        # batch 256 the Linear "violated" cell leaves its R^2 ~ 1/3 plateau only slowly; Patches
        # "holds" ends near 0.97 at either batch (synthetic chapter, "Batch size against
        # iterations"). The code's MLP block order.
        "cpu": Budget(
            seeds=5,
            config={"batch_size": 1024, "n_negatives": 1024, "iterations": 1000, "eval_every": 50,
                    "mlp_order": "linear_relu_bn"},
            groups={"holds": {"iterations": 2000, "eval_every": 100},
                    "adapted": {"batch_size": 16, "n_negatives": 32, "iterations": 4000, "eval_every": 100},
                    "inverse": {"batch_size": 256, "n_negatives": 256}},
            rerun_at="paper",
        ),
        "smoke": Budget(
            seeds=2,
            config={"batch_size": 64, "n_negatives": 64, "iterations": 30, "eval_every": 10, "n_eval": 256,
                    "mlp_order": "linear_relu_bn"},
            groups={"adapted": {"batch_size": 16, "n_negatives": 16}},
        ),
    },
    # --- The constraint-ratio sweep (Section 4.1; Tables 8-11, Figure 5b) ---------------------
    "constraint_ratio": {
        # Per-anchor negatives (anchor_groups = 0: the paper's estimator; G > 0 has the same
        # expected loss at 2N + G M + ... encoder points a step instead of N M, see
        # cldiv.synthetic.train.sample_grouped_batch).
        "paper": Budget(
            seeds=5,
            config={"d_fixed": 1, "loss": "support_corrected", "batch_size": 2000, "n_negatives": 2000,
                    "iterations": 5000, "eval_every": 250, "lr": 1e-3},
            axes={"rhos": tuple(round(0.1 * i, 1) for i in range(11))},
        ),
        # The sizes of the synthetic benchmark's paper-budget adapted cells, the costliest size of its
        # adapted-budget study at which every run converged: N = 256 anchors in 64 groups of 4 (each
        # group one u, its rho M fibre negatives shared by its members; the (1 - rho) M uniform ones
        # shared by all), M = 64 negatives, 8000 iterations, float32; so rho = 1 with the MLP is that
        # Table 1 cell itself. At the earlier 16 anchors x 32 negatives, some runs lowered their
        # training loss through BatchNorm's statistics over 16 anchors (the synthetic chapter's adapted-budget
        # study: a loss gap, not a better encoder); grouping by 4 does not measurably
        # change the rho = 0 end at this size (the chapter's "price of sharing"). rho on 5 of the
        # paper's 11 values, 3 seeds; the code's MLP block order.
        "cpu": Budget(
            seeds=3,
            config={"d_fixed": 1, "loss": "support_corrected", "batch_size": 256, "n_negatives": 64,
                    "anchor_groups": 64, "iterations": 8000, "eval_every": 200, "lr": 1e-3,
                    "mlp_order": "linear_relu_bn", "precision": "fp32"},
            axes={"rhos": (0.0, 0.2, 0.5, 0.8, 1.0)},
        ),
        "smoke": Budget(
            seeds=2,
            config={"d_fixed": 1, "loss": "support_corrected", "batch_size": 16, "n_negatives": 16,
                    "anchor_groups": 4, "iterations": 20, "eval_every": 10, "n_eval": 256,
                    "mlp_order": "linear_relu_bn"},
            axes={"rhos": (0.0, 1.0)},
        ),
    },
    # --- The progressive violation on S^9 (Section 4.2; Table 7, Figure 5c) -------------------
    # sign_rules: positive laws run in addition to "paper" at d_fixed = k - 1 ("code": the
    # authors' fair coin, which produced the published figure).
    "progressive_violation": {
        "paper": Budget(
            seeds=5,
            config={"latent_dim": 10, "loss": "infonce", "batch_size": 2000, "n_negatives": 2000,
                    "iterations": 5000, "eval_every": 250, "lr": 1e-3, "hidden_widths": PAPER_10D_WIDTHS},
            axes={"d_fixed": tuple(range(11)), "sign_rules": ("code",)},
        ),
        # Widths shrunk ~20x in parameters, N = M = 128, 24000 iterations (at 300 most runs were
        # still moving; at 3000 those with 6 or more fixed coordinates were still losing R^2; at
        # 12000 7 of 54 runs were still moving, the progressive-violation chapter counts them),
        # 8 of the 11 d_fixed values, 3 seeds.
        "cpu": Budget(
            seeds=3,
            config={"latent_dim": 10, "loss": "infonce", "batch_size": 128, "n_negatives": 128,
                    "iterations": 24000, "eval_every": 400, "lr": 1e-3, "hidden_widths": (256, 256, 128, 64, 32),
                    "mlp_order": "linear_relu_bn"},
            axes={"d_fixed": (0, 1, 2, 4, 6, 8, 9, 10), "sign_rules": ("code",)},
        ),
        "smoke": Budget(
            seeds=2,
            config={"latent_dim": 10, "loss": "infonce", "batch_size": 32, "n_negatives": 32,
                    "iterations": 20, "eval_every": 10, "n_eval": 256, "hidden_widths": (32, 16),
                    "mlp_order": "linear_relu_bn"},
            axes={"d_fixed": (0, 9, 10), "sign_rules": ("code",)},
        ),
    },
    # --- SimCLR on images (Section 5, Figure 3): per-encoder sizes are the groups -------------
    "simclr": {
        "paper": Budget(seeds=5, config={}, groups=PAPER_IMAGE_SIZES),
        # What the committed results use, chosen by measurement (cifar10 chapter, "The budget"):
        # 5000 / 2000 images, 40 epochs at batch 128 (1600 Adam steps: at 300 steps of batch 250 and
        # lr 3e-4 no encoder learned anything; at 20 epochs most cells were still moving and ResNet / All
        # was still climbing, cifar10 chapter "Why this data set and these settings"), shrunk encoders, the ResNet with the CIFAR stem (3x3,
        # no pooling: the ImageNet stem leaves 8x8 maps of a 32x32 image) and at lr 2e-3 (the ViT
        # and the MLP keep the paper's 3e-4: at 2e-3 the ViT collapses and the MLP ends below its
        # probe at initialisation); 3 seeds.
        "cpu": Budget(
            seeds=3,
            config={"n_train": 5000, "n_test": 2000, "epochs": 40, "batch_size": 128, "probe_standardize": True},
            groups={"resnet18": {"width": 8, "depth": 1, "resnet_stem": "cifar", "lr": 2e-3},
                    "vit": {"width": 64, "depth": 2}, "mlp": {"width": 1024, "depth": 3}},
        ),
        "smoke": Budget(
            seeds=1,
            config={"n_train": 256, "n_test": 256, "epochs": 2, "batch_size": 64, "probe_epochs": 10,
                    "probe_standardize": True},
            groups={"resnet18": {"width": 8, "depth": 1}, "vit": {"width": 32, "depth": 1},
                    "mlp": {"width": 64, "depth": 1}},
        ),
    },
}


def budget(experiment: str, name: str) -> Budget:
    """The budget ``name`` (one of BUDGET_NAMES) of ``experiment`` (one of EXPERIMENTS)."""
    check_choice("experiment", experiment, EXPERIMENTS)
    check_choice("budget", name, BUDGET_NAMES)
    return BUDGETS[experiment][name]


def overrides(experiment: str, name: str, group: str | None = None) -> dict[str, Any]:
    """The config fields a run of ``group`` (one of the experiment's GROUPS; None: no group) gets."""
    spec = budget(experiment, name)
    if group is not None:
        check_choice("group", group, GROUPS[experiment])
    return spec.fields(group)
