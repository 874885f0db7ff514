"""Many synthetic-benchmark runs as one batched model (the GPU path of Table 1).

A single MLP run at the paper's protocol is far too small to keep a GPU busy. ``train_batched``
trains E runs that share their shapes (MLP encoder, InfoNCE, same batch, negatives, iterations,
learning rate and block order; any processes, conditions and seeds) as one model: the E encoders'
weights are stacked along a leading dimension and every Linear layer is one batched matmul
(``torch.bmm``), BatchNorm statistics are taken per run and per batch (anchors, positives,
negatives), and one Adam steps all of them -- Adam is elementwise, so this is E independent Adams.

Each run keeps its own generator g, its own initialisation (drawn exactly as ``train`` draws it)
and its own random streams, and is scored by the same ``final_metrics``; the results have the
format of ``cldiv.train.train`` and equal its results up to floating-point rounding (the batched
matmuls sum in a different order). Observations of different widths (Linear maps to R^7) are
zero-padded; the padded input columns never receive a gradient.
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from cldiv.config import SyntheticConfig
from cldiv.encoders import MLPEncoder
from cldiv.losses import info_nce
from cldiv.train import (
    _DATA_STREAM,
    _EVAL_STREAM,
    _curve_point,
    _stream,
    build_model,
    embed,
    final_metrics,
    sample_batch,
    scatter_latents,
)
from cldiv.sphere import uniform_sphere

Tensor = torch.Tensor

#: Fields that must agree between the runs of one batched job.
SHARED_FIELDS = ("encoder", "loss", "batch_size", "n_negatives", "iterations", "eval_every", "n_eval",
                 "lr", "mlp_order", "latent_dim")


def batch_key(config: SyntheticConfig) -> tuple:
    """Runs with equal keys can be trained together by ``train_batched``."""
    return tuple(getattr(config, name) for name in SHARED_FIELDS)


class StackedMLP(nn.Module):
    """E ``MLPEncoder``s evaluated together: x (E, R, d) -> (E, R, k) unit vectors."""

    def __init__(self, encoders: list[MLPEncoder]) -> None:
        super().__init__()
        first = encoders[0]
        self.order, self.n_layers = first.order, len(first.linears)
        self.input_dim = max(e.input_dim for e in encoders)
        weights = []
        for i in range(self.n_layers):
            w = [e.linears[i].weight.detach() for e in encoders]
            if i == 0:  # zero-pad narrower inputs
                w = [F.pad(wi, (0, self.input_dim - wi.shape[1])) for wi in w]
            weights.append(nn.Parameter(torch.stack(w)))  # (E, out, in)
        self.weights = nn.ParameterList(weights)
        self.biases = nn.ParameterList(
            [nn.Parameter(torch.stack([e.linears[i].bias.detach() for e in encoders]))
             for i in range(self.n_layers)] if self.order == "linear_relu_bn" else []
        )
        self.gammas = nn.ParameterList(
            [nn.Parameter(torch.stack([e.norms[i].weight.detach() for e in encoders])) for i in range(self.n_layers)])
        self.betas = nn.ParameterList(
            [nn.Parameter(torch.stack([e.norms[i].bias.detach() for e in encoders])) for i in range(self.n_layers)])
        for i in range(self.n_layers):
            self.register_buffer(f"running_mean{i}", torch.stack([e.norms[i].running_mean for e in encoders]))
            self.register_buffer(f"running_var{i}", torch.stack([e.norms[i].running_var for e in encoders]))
        self.head_weight = nn.Parameter(torch.stack([e.head.weight.detach() for e in encoders]))
        self.head_bias = nn.Parameter(torch.stack([e.head.bias.detach() for e in encoders]))
        self.eps, self.momentum = first.norms[0].eps, first.norms[0].momentum

    def _norm(self, h: Tensor, i: int, segments: int) -> Tensor:
        gamma, beta = self.gammas[i][:, None, None, :], self.betas[i][:, None, None, :]
        mean_buf, var_buf = getattr(self, f"running_mean{i}"), getattr(self, f"running_var{i}")
        if not self.training:
            return (h - mean_buf[:, None]) * (var_buf[:, None] + self.eps).rsqrt() * self.gammas[i][:, None] \
                + self.betas[i][:, None]
        e, rows, c = h.shape
        n = rows // segments
        hs = h.view(e, segments, n, c)
        var, mean = torch.var_mean(hs, dim=2, correction=0, keepdim=True)
        with torch.no_grad():
            for s in range(segments):  # as `segments` consecutive BatchNorm1d calls
                mean_buf.lerp_(mean[:, s, 0], self.momentum)
                var_buf.lerp_(var[:, s, 0] * (n / max(n - 1, 1)), self.momentum)
        return ((hs - mean) * (var + self.eps).rsqrt() * gamma + beta).view(e, rows, c)

    def forward(self, x: Tensor, segments: int = 1) -> Tensor:
        h = x
        for i in range(self.n_layers):
            h = torch.bmm(h, self.weights[i].transpose(1, 2))
            if self.order == "linear_bn_relu":
                h = F.relu(self._norm(h, i, segments))
            else:
                h = self._norm(F.relu(h + self.biases[i][:, None]), i, segments)
        out = torch.baddbmm(self.head_bias[:, None], h, self.head_weight.transpose(1, 2))
        return F.normalize(out, dim=-1)

    @torch.no_grad()
    def unstack(self, index: int, template: MLPEncoder) -> MLPEncoder:
        """Run ``index`` as a plain ``MLPEncoder`` (weights copied into ``template``)."""
        for i in range(self.n_layers):
            template.linears[i].weight.copy_(self.weights[i][index, :, : template.linears[i].in_features])
            if self.order == "linear_relu_bn":
                template.linears[i].bias.copy_(self.biases[i][index])
            template.norms[i].weight.copy_(self.gammas[i][index])
            template.norms[i].bias.copy_(self.betas[i][index])
            template.norms[i].running_mean.copy_(getattr(self, f"running_mean{i}")[index])
            template.norms[i].running_var.copy_(getattr(self, f"running_var{i}")[index])
        template.head.weight.copy_(self.head_weight[index])
        template.head.bias.copy_(self.head_bias[index])
        return template


def train_batched(configs: list[SyntheticConfig], *, device: str = "cpu") -> list[dict[str, Any]]:
    """Train several runs as one batched model; one result per config, as ``train`` returns.

    All configs must share ``SHARED_FIELDS`` with encoder "mlp" and loss "infonce" with as
    many negatives as anchors (the paper's protocol).
    """
    if not configs:
        return []
    keys = {batch_key(c) for c in configs}
    if len(keys) != 1:
        raise ValueError(f"configs must agree on {SHARED_FIELDS} to be batched; got {len(keys)} groups")
    first = configs[0]
    if first.encoder != "mlp" or first.loss != "infonce" or first.batch_size != first.n_negatives:
        raise ValueError("train_batched supports encoder='mlp', loss='infonce', batch_size == n_negatives")
    models = [build_model(c, device) for c in configs]
    stacked = StackedMLP([m.encoder for m in models]).to(device).train()
    optimizer = torch.optim.Adam(stacked.parameters(), lr=first.lr,
                                 fused=device.startswith("cuda") or device == "cpu")
    data = [_stream(c.seed, _DATA_STREAM, device) for c in configs]
    evals = []
    for c in configs:
        stream = _stream(c.seed, _EVAL_STREAM, device)
        evals.append((uniform_sphere(c.n_eval, c.latent_dim, stream, device=device),
                      uniform_sphere(c.n_eval, c.latent_dim, stream, device=device)))
    n, k, d = first.batch_size, first.latent_dim, stacked.input_dim
    losses = torch.empty(first.iterations, len(configs), device=device)
    curves = [{"iteration": [], "loss": [], "r2": []} for _ in configs]
    start = time.perf_counter()
    for it in range(first.iterations):
        with torch.no_grad():
            x = torch.stack([F.pad(model.generator(torch.cat(sample_batch(c, gen, device))),
                                   (0, d - model.generator.output_dim))
                             for c, gen, model in zip(configs, data, models)])  # (E, 3N, d)
        h = stacked(x, segments=3).view(len(configs), 3, n, k)
        per_run = torch.stack([info_nce(h[e, 0], h[e, 1], h[e, 2], c.tau)
                               for e, c in enumerate(configs)])
        optimizer.zero_grad(set_to_none=True)
        per_run.sum().backward()  # the runs share no parameter: each gets its own gradient
        optimizer.step()
        losses[it] = per_run.detach()
        if (it + 1) % first.eval_every == 0 or it + 1 == first.iterations:
            stacked.eval()
            for e, (c, model) in enumerate(zip(configs, models)):
                stacked.unstack(e, model.encoder)
                curves[e]["iteration"].append(it + 1)
                curves[e]["loss"].append(round(float(losses[it, e]), 5))
                curves[e]["r2"].append(round(_curve_point(model, c, *evals[e]), 5))
            stacked.train()
    seconds = time.perf_counter() - start
    results = []
    stacked.eval()
    for e, (c, model) in enumerate(zip(configs, models)):
        stacked.unstack(e, model.encoder)
        metrics = final_metrics(model, c, device)
        metrics["train_loss_last"] = float(losses[-1, e])
        scatter = embed(model, scatter_latents(c.latent_dim).to(device)).cpu()
        results.append({
            "metrics": metrics,
            "curves": curves[e],
            "scatter_h": [[round(v, 3) for v in row] for row in scatter.tolist()],
            "timing": {"train_seconds": round(seconds / len(configs), 3),
                       "seconds_per_iteration": round(seconds / len(configs) / c.iterations, 5),
                       "batched_runs": len(configs)},
        })
    return results


def run_batched(configs: list[SyntheticConfig], store=None, *, device: str | None = None) -> list[dict]:
    """Load or compute every config, training the missing ones in batched groups (GPU path).

    Configs ``train_batched`` cannot batch (support-corrected loss, inverse encoders) run one
    by one through ``cldiv.train.run_synthetic``.
    """
    from cldiv.store import ResultStore
    from cldiv.train import default_device, run_synthetic

    store = store or ResultStore.default()
    device = device or default_device()
    pending = [c for c in configs if store.load(c) is None]
    groups: dict[tuple, list[SyntheticConfig]] = {}
    for c in pending:
        if c.encoder == "mlp" and c.loss == "infonce" and c.batch_size == c.n_negatives:
            groups.setdefault(batch_key(c), []).append(c)
        else:
            store.get_or_run(c, run_synthetic)
    for group in groups.values():
        start = time.perf_counter()
        results = train_batched(group, device=device)
        wall = (time.perf_counter() - start) / len(group)
        for c, result in zip(group, results):
            store.save(c, result, wall_time_s=wall, device=device)
    return [store.load(c) for c in configs]
