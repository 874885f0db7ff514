"""Many synthetic-benchmark runs trained as one batched model (the GPU path of Table 1).

One run at the paper's protocol is far too small to keep a GPU busy. ``train_batched`` trains E
runs of one *group* -- runs whose models have the same shapes -- together: the E encoders'
weights are stacked along a leading dimension, every layer is one batched operation, and one
Adam steps all of them (Adam is elementwise, so this is E independent Adams). Each run keeps its
own generator g, its own initialisation and random streams (drawn exactly as ``cldiv.synthetic.train``
draws them) and is scored by the same ``final_metrics``, so its result has the format of
``cldiv.synthetic.train.train`` and equals it up to floating-point rounding.

Which config fields are honoured, and how (every field of ``SyntheticConfig``):

- per run: ``process``, ``process_variant``, ``d_fixed``, ``positive_law``, ``tau``, ``kappa``, ``seed``;
- per group (``group_key``): ``encoder``, ``latent_dim``, ``mlp_order``, ``hidden_widths``,
  ``batch_size``, ``n_negatives``, ``iterations``, ``eval_every``, ``n_eval``, ``lr``, ``precision``, and for the
  inverse encoders the ``process`` (each process has its own architecture);
- ``loss`` must be ``"infonce"`` (so ``rho`` and ``anchor_groups`` play no part): the
  support-corrected loss encodes N x M negatives a step, which ``run_batched`` leaves to the
  per-run trainer; ``train_batched`` rejects it with an error.

The MLPs (``StackedMLP``) normalise each run's anchors, positives and negatives with their own
BatchNorm statistics, as the per-run trainer does; observations of different widths (Linear maps
to R^7) are zero-padded, and the padded input columns never receive a gradient. The inverse
encoders have no BatchNorm and are stacked with ``torch.func`` (``StackedEncoders``).
"""

from __future__ import annotations

import copy
import os
import time
from typing import Any, Callable, Iterable

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state

from cldiv.runs.store import ResultStore
from cldiv.synthetic.train import (DATA_STREAM, autocast, build_model, curve_point, evaluation_latents, random_stream,
                                   sample_batch, training_result, default_device, run_synthetic)
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.encoders import MLP_HIDDEN, MLPEncoder
from cldiv.losses import full, info_nce

Tensor = torch.Tensor

#: Fields that must agree between the runs of one group.
GROUP_FIELDS = ("encoder", "latent_dim", "mlp_order", "hidden_widths", "batch_size", "n_negatives",
                "iterations", "eval_every", "n_eval", "lr", "precision")
#: Share of the free device memory that ``plan_groups`` lets one group's training use.
MEMORY_SHARE = 0.5


def check_batchable(config: SyntheticConfig) -> None:
    """Raise a clear error for a config the batched trainer cannot train."""
    if config.loss != "infonce":
        raise ValueError(f"the batched trainer supports loss='infonce' only; got loss={config.loss!r} "
                         "(cldiv.synthetic.batched.run_batched trains support-corrected runs one by one)")


def group_key(config: SyntheticConfig) -> tuple:
    """Runs with equal keys have models of equal shapes and are trained together."""
    check_batchable(config)
    architecture = config.process if config.encoder == "inverse" else None
    return (*(getattr(config, name) for name in GROUP_FIELDS), architecture)


class StackedMLP(nn.Module):
    """E ``MLPEncoder``s of equal widths evaluated together: x (E, R, d) -> (E, R, k) unit vectors."""

    def __init__(self, encoders: list[MLPEncoder]) -> None:
        super().__init__()
        first = encoders[0]
        self.order, self.n_layers = first.order, len(first.linears)
        self.input_dim = max(e.input_dim for e in encoders)

        def stack(get, pad: bool = False) -> nn.Parameter:
            tensors = [get(e).detach() for e in encoders]
            if pad:  # zero-pad narrower inputs
                tensors = [F.pad(t, (0, self.input_dim - t.shape[1])) for t in tensors]
            return nn.Parameter(torch.stack(tensors))

        self.weights = nn.ParameterList(
            [stack(lambda e: e.linears[i].weight, pad=i == 0) for i in range(self.n_layers)])  # (E, out, in)
        self.biases = nn.ParameterList(
            [stack(lambda e: e.linears[i].bias) for i in range(self.n_layers)] if self.order == "linear_relu_bn" else [])
        self.gammas = nn.ParameterList([stack(lambda e: e.norms[i].weight) for i in range(self.n_layers)])
        self.betas = nn.ParameterList([stack(lambda e: e.norms[i].bias) for i in range(self.n_layers)])
        for i in range(self.n_layers):
            self.register_buffer(f"running_mean{i}", torch.stack([e.norms[i].running_mean for e in encoders]))
            self.register_buffer(f"running_var{i}", torch.stack([e.norms[i].running_var for e in encoders]))
        self.head_weight = stack(lambda e: e.head.weight)
        self.head_bias = stack(lambda e: e.head.bias)
        self.eps, self.momentum = first.norms[0].eps, first.norms[0].momentum

    def _norm(self, h: Tensor, i: int, segments: int) -> Tensor:
        """BatchNorm of layer i, per run; in training mode per segment, updating running
        statistics segment after segment as ``segments`` consecutive BatchNorm1d calls do."""
        mean_buf, var_buf = getattr(self, f"running_mean{i}"), getattr(self, f"running_var{i}")
        if not self.training:
            scale = (var_buf[:, None] + self.eps).rsqrt() * self.gammas[i][:, None]
            return (h - mean_buf[:, None]) * scale + self.betas[i][:, None]
        e, rows, c = h.shape
        n = rows // segments
        hs = h.view(e, segments, n, c)
        var, mean = torch.var_mean(hs, dim=2, correction=0, keepdim=True)
        with torch.no_grad():
            for s in range(segments):
                mean_buf.lerp_(mean[:, s, 0], self.momentum)
                var_buf.lerp_(var[:, s, 0] * (n / max(n - 1, 1)), self.momentum)
        gamma, beta = self.gammas[i][:, None, None, :], self.betas[i][:, None, None, :]
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
        return F.normalize(full(out), dim=-1)

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


class StackedEncoders(nn.Module):
    """E copies of one BatchNorm-free encoder (the inverse encoders), evaluated with
    ``torch.func.vmap`` over their stacked parameters: x (E, R, d) -> (E, R, k)."""

    def __init__(self, encoders: list[nn.Module]) -> None:
        super().__init__()
        params, buffers = stack_module_state(encoders)
        self.names = list(params)
        self.stacked = nn.ParameterList([nn.Parameter(params[name]) for name in self.names])
        self.buffer_names = list(buffers)
        for j, name in enumerate(self.buffer_names):
            self.register_buffer(f"buffer{j}", buffers[name])
        self.base = [copy.deepcopy(encoders[0]).to("meta")]  # a list: not a submodule

    def _state(self) -> tuple[dict, dict]:
        params = dict(zip(self.names, self.stacked))
        buffers = {name: getattr(self, f"buffer{j}") for j, name in enumerate(self.buffer_names)}
        return params, buffers

    def forward(self, x: Tensor, segments: int = 1) -> Tensor:
        def one(params, buffers, xi):
            return functional_call(self.base[0], (params, buffers), (xi,))

        return torch.vmap(one)(*self._state(), x)

    @torch.no_grad()
    def unstack(self, index: int, template: nn.Module) -> nn.Module:
        """Run ``index`` as a plain encoder (weights copied into ``template``)."""
        params, buffers = self._state()
        template.load_state_dict({name: t[index] for name, t in {**params, **buffers}.items()})
        return template


def stack_encoders(encoders: list[nn.Module]) -> nn.Module:
    return StackedMLP(encoders) if isinstance(encoders[0], MLPEncoder) else StackedEncoders(encoders)


class DeadlinePassed(Exception):
    """A group's training was stopped at the wall-time limit; none of its runs is complete."""


def batched_losses(stacked: nn.Module, models: list, configs: list[SyntheticConfig], batches: list) -> Tensor:
    """Each run's InfoNCE loss (E,) on its batch (anchors, positives, negatives), as
    ``cldiv.synthetic.train.contrastive_loss`` computes it: BatchNorm statistics per run and per batch."""
    width = max(model.generator.output_dim for model in models)

    def observe(model, z):  # x = g(z), zero-padded to the widest observation
        return F.pad(model.generator(z), (0, width - model.generator.output_dim))

    with torch.no_grad():
        pairs = torch.stack([observe(m, torch.cat(b[:2])) for m, b in zip(models, batches)])  # (E, 2N, d)
        negatives = torch.stack([observe(m, b[2]) for m, b in zip(models, batches)])  # (E, M, d)
    n = pairs.shape[1] // 2
    if negatives.shape[1] == n:  # one call, three BatchNorm segments
        h = stacked(torch.cat([pairs, negatives], dim=1), segments=3)
        h_pairs, h_negatives = h[:, : 2 * n], h[:, 2 * n:]
    else:
        h_pairs, h_negatives = stacked(pairs, segments=2), stacked(negatives)
    return torch.stack([info_nce(h_pairs[e, :n], h_pairs[e, n:], h_negatives[e], c.tau)
                        for e, c in enumerate(configs)])


def train_batched(configs: list[SyntheticConfig], *, device: str = "cpu", deadline: float | None = None,
                  clock: Callable[[], float] = time.monotonic) -> list[dict[str, Any]]:
    """Train the runs of one group as one batched model; one result per config, as ``train`` returns.

    ``deadline`` (a value of ``clock``): checked before every step; once passed, training stops
    and ``DeadlinePassed`` is raised, so that no incomplete run is ever returned.
    """
    if not configs:
        return []
    if len({group_key(c) for c in configs}) != 1:
        raise ValueError(f"configs must agree on {GROUP_FIELDS} (and, for inverse encoders, the process) "
                         "to be trained together; split them with cldiv.synthetic.batched.plan_groups")
    first = configs[0]
    models = [build_model(c, device) for c in configs]
    stacked = stack_encoders([m.encoder for m in models]).to(device).train()
    optimizer = torch.optim.Adam(stacked.parameters(), lr=first.lr, fused=device.startswith("cuda") or device == "cpu")
    data = [random_stream(c.seed, DATA_STREAM, device) for c in configs]
    evals = [evaluation_latents(c, device) for c in configs]
    losses = torch.empty(first.iterations, len(configs), device=device)
    curves = [{"iteration": [], "loss": [], "r2": []} for _ in configs]
    start = time.perf_counter()
    for it in range(first.iterations):
        if deadline is not None and clock() > deadline:
            raise DeadlinePassed(f"stopped at iteration {it} of {first.iterations}")
        with autocast(first, device):
            per_run = batched_losses(stacked, models, configs,
                                     [sample_batch(c, g, device) for c, g in zip(configs, data)])
        optimizer.zero_grad(set_to_none=True)
        per_run.sum().backward()  # the runs share no parameter: each gets its own gradient
        optimizer.step()
        losses[it] = per_run.detach()
        if (it + 1) % first.eval_every == 0 or it + 1 == first.iterations:
            stacked.eval()
            for e, model in enumerate(models):
                stacked.unstack(e, model.encoder)
                curves[e]["iteration"].append(it + 1)
                curves[e]["loss"].append(round(float(losses[it, e]), 5))
                curves[e]["r2"].append(round(curve_point(model, *evals[e]), 5))
            stacked.train()
    seconds = (time.perf_counter() - start) / len(configs)
    stacked.eval()
    results = []
    for e, (config, model) in enumerate(zip(configs, models)):
        stacked.unstack(e, model.encoder)
        results.append(training_result(model, config, device, curves[e], float(losses[-1, e]), seconds,
                                       batched_runs=len(configs)))
    return results


def estimated_bytes(config: SyntheticConfig) -> int:
    """A generous estimate of one run's training memory at ``config``'s sizes (float32).

    Activations: each of the 2N + M rows keeps about four values per hidden unit (layer output,
    activation, normalised output, gradient); the loss keeps about three N x M matrices
    (logits, softmax weights, gradient). Parameters and Adam state are negligible next to them.
    """
    hidden = sum(config.hidden_widths or MLP_HIDDEN) if config.encoder == "mlp" else 64 + 32 + 32 + 16
    rows = 2 * config.batch_size + config.n_negatives
    return 4 * (4 * rows * (hidden + config.latent_dim) + 3 * config.batch_size * (config.n_negatives + 1))


def free_memory_bytes(device: str) -> int:
    """Memory the device has free now (CUDA: the card's; CPU: the machine's available RAM)."""
    if device.startswith("cuda"):
        return torch.cuda.mem_get_info(torch.device(device))[0]
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def plan_groups(configs: Iterable[SyntheticConfig], memory_bytes: int,
                share: float = MEMORY_SHARE) -> list[list[SyntheticConfig]]:
    """Split configs into groups of equal ``group_key``, each small enough that its estimated
    memory (``estimated_bytes`` per run) stays within ``share`` of ``memory_bytes``."""
    by_key: dict[tuple, list[SyntheticConfig]] = {}
    for config in configs:
        by_key.setdefault(group_key(config), []).append(config)
    groups = []
    for members in by_key.values():
        size = max(1, int(share * memory_bytes // estimated_bytes(members[0])))
        groups += [members[i: i + size] for i in range(0, len(members), size)]
    return groups


def run_batched(configs: list[SyntheticConfig], store=None, *, device: str | None = None) -> list[dict]:
    """Load or compute every config, training the missing ones in batched groups (GPU path).

    Support-corrected runs, which the batched trainer does not take, run one by one through
    ``cldiv.synthetic.train.run_synthetic``.
    """
    store = store or ResultStore.default()
    device = device or default_device()
    pending = [c for c in configs if store.load(c) is None]
    for config in [c for c in pending if c.loss != "infonce"]:
        store.get_or_run(config, run_synthetic)
    batchable = [c for c in pending if c.loss == "infonce"]
    for group in plan_groups(batchable, free_memory_bytes(device)):
        store.check_writable(group[0])
        start = time.perf_counter()
        results = train_batched(group, device=device)
        wall = (time.perf_counter() - start) / len(group)
        for config, result in zip(group, results):
            store.save(config, result, wall_time_s=wall, device=device)
    return [store.load(c) for c in configs]
