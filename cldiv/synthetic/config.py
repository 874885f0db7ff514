"""The synthetic benchmark's config (Section 3; Section 4's sweeps reuse it).

``SyntheticConfig`` is one training run of h = f o g on S^{k-1}; its budgets are in
``cldiv.budgets``, and ``cldiv.config`` says how configs are hashed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cldiv.synthetic.generators import GENERATORS
from cldiv.config import added_field, check_choice, check_positive, check_range
from cldiv.synthetic.encoders import MLP_ORDERS

ENCODERS = ("mlp", "inverse")
LOSSES = ("infonce", "support_corrected")
POSITIVE_LAWS = ("paper", "density", "code")
PRECISIONS = ("fp32", "bf16")


@dataclass(frozen=True)
class SyntheticConfig:
    """One training run of the synthetic benchmark (Section 3): h = f o g on S^{k-1}.

    condition: d_fixed = 0 is 'diversity holds' (vMF positives on the whole sphere);
    d_fixed > 0 violates it (first d_fixed coordinates kept, Section 4.2).
    loss: 'infonce' with a fresh batch of n_negatives uniform points shared by all anchors,
    or 'support_corrected' (Eqs. 7-8) where a fraction rho of each anchor's n_negatives lies
    on K(z) and the rest is uniform on the sphere.
    kappa = None means kappa = 1/tau, the paper's choice.
    """

    kind: ClassVar[str] = "synthetic"

    process: str = "identity"
    process_variant: str = "paper"
    latent_dim: int = 3
    encoder: str = "mlp"
    mlp_order: str = "linear_bn_relu"
    d_fixed: int = 0
    loss: str = "infonce"
    rho: float = 1.0
    tau: float = 0.3
    kappa: float | None = None
    batch_size: int = 2000
    n_negatives: int = 2000
    lr: float = 1e-3
    iterations: int = 5000
    eval_every: int = 100
    n_eval: int = 2000
    seed: int = 0
    # Added for the sweeps (Section 4); at their defaults they leave old results' hashes alone.
    # anchor_groups: 0 = every anchor has its own negatives (support-corrected loss); G > 0 =
    # anchors in G groups sharing u, a group's K(z) negatives shared by its anchors and the
    # uniform part shared by all (same expected loss, see cldiv.synthetic.train.sample_grouped_batch).
    anchor_groups: int = added_field(0)
    # hidden_widths: () = the MLP's default widths [128, 256, 256, 256, 128].
    hidden_widths: tuple[int, ...] = added_field(())
    # positive_law: how a restricted positive moves v on K(z) (cldiv.sphere.restricted_vmf):
    # "paper" (v~ = r vMF(v / r, kappa), the paper's sampling rule), "density" (the stated density
    # e^{kappa z.z~} on K(z)), "code" (the authors' code: as "paper", but with one free coordinate
    # its sign is a fair coin).
    positive_law: str = added_field("paper")
    # precision: "fp32", or "bf16" mixed precision: the encoder's matrix products in bfloat16
    # (autocast), its output normalisation, the loss, the weights, Adam and all metrics in float32
    # (cldiv.synthetic.encoders, cldiv.losses). About 2x faster per step on CPUs with bf16 instructions.
    precision: str = added_field("fp32")

    def __post_init__(self) -> None:
        check_choice("process", self.process, GENERATORS)
        check_choice("process_variant", self.process_variant, ("paper", "code"))
        check_positive("latent_dim", self.latent_dim, integer=True)
        check_choice("encoder", self.encoder, ENCODERS)
        check_choice("mlp_order", self.mlp_order, MLP_ORDERS)
        check_range("d_fixed", self.d_fixed, 0, self.latent_dim, integer=True)
        check_choice("loss", self.loss, LOSSES)
        check_choice("positive_law", self.positive_law, POSITIVE_LAWS)
        check_choice("precision", self.precision, PRECISIONS)
        check_range("rho", self.rho, 0.0, 1.0)
        check_positive("tau", self.tau)
        if self.kappa is not None:
            check_positive("kappa", self.kappa)
        if self.loss == "support_corrected" and self.d_fixed == 0:
            raise ValueError("loss='support_corrected' needs d_fixed >= 1 (K(z) is the whole sphere otherwise)")
        for name in ("batch_size", "n_negatives", "iterations", "eval_every", "n_eval"):
            check_positive(name, getattr(self, name), integer=True)
        check_positive("lr", self.lr)
        check_range("seed", self.seed, 0, 2**63 - 1, integer=True)
        check_range("anchor_groups", self.anchor_groups, 0, self.batch_size, integer=True)
        if self.anchor_groups and (self.loss != "support_corrected" or self.batch_size % self.anchor_groups):
            raise ValueError("anchor_groups > 0 needs loss='support_corrected' and a batch_size divisible by it; "
                             f"got anchor_groups={self.anchor_groups}, loss={self.loss!r}, batch_size={self.batch_size}")
        if not isinstance(self.hidden_widths, (tuple, list)):
            raise ValueError(f"hidden_widths must be a tuple of positive integers (() = default); got {self.hidden_widths!r}")
        object.__setattr__(self, "hidden_widths", tuple(self.hidden_widths))  # JSON/papermill give lists
        for width in self.hidden_widths:
            check_positive("hidden_widths", width, integer=True)
        if self.hidden_widths and self.encoder != "mlp":
            raise ValueError(f"hidden_widths applies to encoder='mlp' only; got encoder={self.encoder!r}")

    @property
    def concentration(self) -> float:
        """kappa of the vMF conditional (1/tau unless set)."""
        return 1.0 / self.tau if self.kappa is None else self.kappa
