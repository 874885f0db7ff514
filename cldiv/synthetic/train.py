"""Training h = f ∘ g by contrastive learning (Section 3 protocol), one config per run.

``train(config)`` is the whole experiment of one cell and seed: draw g (frozen) and f from
the seed, train f with Adam on fresh batches, log the training loss and the held-out R^2 on a
fixed evaluation set every ``eval_every`` iterations, and score the final h on fresh held-out
points. One training step (Section 3):

    z ~ U(S^{k-1}) (N anchors),  z~ ~ restricted vMF(z; d_fixed, kappa) (positives),
    infonce:            M fresh uniform negatives shared by all anchors (the paper's protocol);
    support_corrected:  M negatives per anchor, a fraction rho uniform on K(z), the rest
                        uniform on the sphere (Eqs. 7-8; rho = 1 is Table 1's "adapted").

When N = M (the paper's protocol) anchors, positives and negatives go through the MLP in one
call with per-batch BatchNorm statistics (``MLPEncoder(..., segments=3)``), which computes
exactly what three calls would. The loop does no metric work and no host synchronisation
between evaluations.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any, Iterable

import torch
from tqdm import tqdm

from cldiv.runs.executor import run_sweep
from cldiv.runs.store import bf16_instructions, ResultStore
from cldiv.config import check_choice, with_overrides
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.encoders import Recovery, make_encoder
from cldiv.synthetic.generators import make_generator
from cldiv.losses import info_nce, support_corrected_info_nce
from cldiv.metrics import affine_r2, angle_preservation_error, mean_correlation_coefficient
from cldiv.runs.states import Checkpoints, continued_from, latest_state, machines_so_far, save_state
from cldiv.sphere import grouped_uniform_sphere, restricted_vmf, uniform_on_fibre, uniform_sphere

Tensor = torch.Tensor

# Offsets that give the random streams of one seed distinct generators.
DATA_STREAM, EVAL_STREAM, TEST_STREAM = 1, 2, 3
# Latents whose images h(z) every result keeps (rounded), for the chapter's scatter plots.
SCATTER_POINTS, _SCATTER_SEED = 400, 12345
# Negatives at which the final InfoNCE loss is also reported (published "holds": 4000).
LOSS_NEGATIVES = (2000, 4000)


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def random_stream(seed: int, offset: int, device: str) -> torch.Generator:
    """The generator of one of a seed's random streams (DATA_STREAM, EVAL_STREAM, TEST_STREAM)."""
    return torch.Generator(device=device).manual_seed(seed * 10 + offset)


def build_model(config: SyntheticConfig, device: str = "cpu") -> Recovery:
    """h = f ∘ g for ``config``: g drawn from ``config.seed``, f initialised from it too."""
    g = make_generator(
        config.process, seed=config.seed, latent_dim=config.latent_dim, variant=config.process_variant
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        hidden = {"hidden": config.hidden_widths} if config.hidden_widths else {}
        f = make_encoder(config.encoder, config.process, g, order=config.mlp_order, **hidden)
    return Recovery(g, f).to(device)


def sample_batch(config: SyntheticConfig, generator: torch.Generator, device: str):
    """(anchors (N, k), positives (N, k), negatives (M, k) or per-anchor (N, M, k))."""
    if config.anchor_groups:
        return sample_grouped_batch(config, generator, device)
    n, k = config.batch_size, config.latent_dim
    z = uniform_sphere(n, k, generator, device=device)
    positive = restricted_vmf(z, config.d_fixed, config.concentration, generator,
                              exact_density=config.positive_law == "density",
                              fair_sign=config.positive_law == "code")
    if config.loss == "infonce":
        return z, positive, uniform_sphere(config.n_negatives, k, generator, device=device)
    on_fibre = round(config.rho * config.n_negatives)
    parts = [uniform_on_fibre(z, config.d_fixed, on_fibre, generator)] if on_fibre else []
    if config.n_negatives > on_fibre:
        rest = uniform_sphere(n * (config.n_negatives - on_fibre), k, generator, device=device)
        parts.append(rest.view(n, -1, k))
    return z, positive, torch.cat(parts, dim=1)


def sample_grouped_batch(config: SyntheticConfig, generator: torch.Generator, device: str):
    """Support-corrected batch with anchors in G = ``anchor_groups`` groups that share u.

    Returns (anchors (N, k), positives (N, k), (fibre negatives (G, M_K, k), shared (M_U, k))),
    M_K = round(rho M), M_U = M - M_K; rows g*N/G .. (g+1)*N/G - 1 form group g.

    Why the expected loss is the per-anchor one (Eqs. 7-8 with the rho mixture). The batch loss
    is the mean over anchors of l(z, z~, negatives of z), so its expectation is the mean of the
    anchors' expectations, and each of those depends only on the joint law of one anchor's
    (z, z~, its M negatives), not on how anchors depend on each other. Per anchor here: z is
    uniform on the sphere (``grouped_uniform_sphere``); z~ ~ restricted vMF(z) as before; its
    M_K fibre negatives are i.i.d. uniform on K(z) (they are drawn uniform on the group's K,
    which is K(z), independently of the members' v and z~); its M_U other negatives are
    i.i.d. uniform on the sphere, independent of everything else. That is the per-anchor
    sampler's law, so E[loss] and, the parameters being fixed, E[grad loss] are unchanged;
    only the variance changes (anchors of a group, and all anchors through the uniform part,
    are correlated). The encoder sees 2N + G M_K + M_U points a step instead of 2N + N M.
    With BatchNorm the negatives' batch statistics are themselves a random estimate of the
    same population moments (a fibre negative of a uniform anchor is marginally uniform), so
    the equality is exact for the loss at fixed statistics (eval mode) and holds up to the
    noise of those statistics in training mode. Equal expected gradients do not make equal
    runs: large groups (few distinct u per batch) measurably slow the drift of a violated MLP
    (chapter "The constraint-ratio sweep"), so keep groups small.
    """
    n, k, groups = config.batch_size, config.latent_dim, config.anchor_groups
    z, centres = grouped_uniform_sphere(n, k, config.d_fixed, groups, generator, device=device)
    positive = restricted_vmf(z, config.d_fixed, config.concentration, generator,
                              exact_density=config.positive_law == "density",
                              fair_sign=config.positive_law == "code")
    on_fibre = round(config.rho * config.n_negatives)
    fibre = uniform_on_fibre(centres, config.d_fixed, on_fibre, generator)  # (G, M_K, k)
    shared = uniform_sphere(config.n_negatives - on_fibre, k, generator, device=device)
    return z, positive, (fibre, shared)


def _grouped_loss(model: Recovery, config: SyntheticConfig, batch) -> Tensor:
    """Support-corrected loss of a grouped batch (``sample_grouped_batch``)."""
    z, positive, (fibre, shared) = batch
    n, k = z.shape
    groups, on_fibre = fibre.shape[:2]
    h = model(torch.cat([z, positive]), segments=2).view(2, n, k)
    h_neg = model(torch.cat([fibre.reshape(-1, k), shared]))  # the negatives are one batch
    own = h_neg[: groups * on_fibre].view(groups, 1, on_fibre, k)
    own = own.expand(groups, n // groups, on_fibre, k).reshape(n, on_fibre, k)
    rest = h_neg[groups * on_fibre :]
    return support_corrected_info_nce(h[0], h[1], own, config.tau, shared_negatives=rest if len(rest) else None)


def contrastive_loss(model: Recovery, config: SyntheticConfig, batch) -> Tensor:
    """The training objective of ``config`` on one batch (encoder forward included)."""
    if config.anchor_groups:
        return _grouped_loss(model, config, batch)
    z, positive, negatives = batch
    n, k = z.shape
    if config.loss == "infonce":
        if negatives.shape[0] == n:  # one call, per-batch BatchNorm statistics
            h = model(torch.cat([z, positive, negatives]), segments=3).view(3, n, k)
            return info_nce(h[0], h[1], h[2], config.tau)
        h = model(torch.cat([z, positive]), segments=2).view(2, n, k)
        return info_nce(h[0], h[1], model(negatives), config.tau)
    h = model(torch.cat([z, positive]), segments=2).view(2, n, k)
    own = model(negatives.reshape(-1, k)).view(n, -1, k)  # the negatives are one batch
    return support_corrected_info_nce(h[0], h[1], own, config.tau)


@torch.no_grad()
def embed(model: Recovery, z: Tensor, chunk: int = 65536) -> Tensor:
    """h(z) in evaluation mode (BatchNorm running statistics)."""
    was_training = model.training
    model.eval()
    out = torch.cat([model(z[i : i + chunk]) for i in range(0, z.shape[0], chunk)])
    model.train(was_training)
    return out


@torch.no_grad()
def evaluation_loss(model: Recovery, config: SyntheticConfig, generator, device, **overrides) -> float:
    """The training objective of ``config`` (with ``overrides``) on a fresh batch, eval mode."""
    cfg = with_overrides(config, **overrides) if overrides else config
    was_training = model.training
    model.eval()
    loss = contrastive_loss(model, cfg, sample_batch(cfg, generator, device))
    model.train(was_training)
    return float(loss)


def final_metrics(model: Recovery, config: SyntheticConfig, device: str) -> dict[str, float]:
    """Metrics of the trained h on fresh held-out points (paper App. D and the code's variants).

    r2: affine regression fitted on n_eval points, scored on n_eval other points (held out);
    r2_in_sample: fitted and scored on the same n_eval points (the authors' code);
    mcc: on the held-out points; ape: pairs i != j (paper); ape_code: all n^2 pairs / 2 (code);
    final_loss: the training objective on a fresh batch; for InfoNCE also loss_m<M> with M
    negatives and 2000 anchors for M in LOSS_NEGATIVES.
    """
    generator = random_stream(config.seed, TEST_STREAM, device)
    k = config.latent_dim
    z_fit = uniform_sphere(config.n_eval, k, generator, device=device)
    z_test = uniform_sphere(config.n_eval, k, generator, device=device)
    h_fit, h_test = embed(model, z_fit).cpu(), embed(model, z_test).cpu()
    z_fit, z_test = z_fit.cpu(), z_test.cpu()
    metrics = {
        "r2": affine_r2(h_fit, z_fit, test_features=h_test, test_latents=z_test),
        "r2_in_sample": affine_r2(h_test, z_test),
        "mcc": mean_correlation_coefficient(h_test, z_test),
        "ape": angle_preservation_error(z_test, h_test, convention="paper"),
        "ape_code": angle_preservation_error(z_test, h_test, convention="code"),
        "final_loss": evaluation_loss(model, config, generator, device),
    }
    if config.loss == "infonce":
        for m in LOSS_NEGATIVES:
            metrics[f"loss_m{m}"] = evaluation_loss(
                model, config, generator, device, batch_size=2000, n_negatives=m
            )
    return metrics


def scatter_latents(latent_dim: int = 3) -> Tensor:
    """The fixed latents (SCATTER_POINTS, k) whose images h(z) each result stores."""
    return uniform_sphere(SCATTER_POINTS, latent_dim, torch.Generator().manual_seed(_SCATTER_SEED))


def evaluation_latents(config: SyntheticConfig, device: str) -> tuple[Tensor, Tensor]:
    """The fixed latents (fit, test), each (n_eval, k), of the held-out R^2 training curve."""
    stream = random_stream(config.seed, EVAL_STREAM, device)
    return tuple(uniform_sphere(config.n_eval, config.latent_dim, stream, device=device) for _ in range(2))


def curve_point(model: Recovery, z_fit: Tensor, z_test: Tensor) -> float:
    """Held-out R^2 of h: affine map fitted on h(z_fit), scored on h(z_test)."""
    h_fit, h_test = embed(model, z_fit).cpu(), embed(model, z_test).cpu()
    return affine_r2(h_fit, z_fit.cpu(), test_features=h_test, test_latents=z_test.cpu())


def training_result(model: Recovery, config: SyntheticConfig, device: str, curve: dict, last_loss: float,
                    train_seconds: float, **timing: Any) -> dict[str, Any]:
    """What a run stores: final metrics, the training curve, h of the scatter latents, timing."""
    metrics = final_metrics(model, config, device)
    metrics["train_loss_last"] = last_loss
    scatter = embed(model, scatter_latents(config.latent_dim).to(device)).cpu()
    return {
        "metrics": metrics,
        "curves": curve,
        "scatter_h": [[round(v, 3) for v in row] for row in scatter.tolist()],
        "timing": {
            "train_seconds": round(train_seconds, 3),
            "seconds_per_iteration": round(train_seconds / config.iterations, 5),
            **timing,
        },
    }


def autocast(config: SyntheticConfig, device: str):
    """The precision context of a training step: bf16 autocast of the encoder's matrix products for
    ``precision="bf16"`` (the loss and the normalisation stay in float32), nothing for "fp32"."""
    return torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=config.precision == "bf16")


def warn_if_slow_bf16(config: SyntheticConfig, device: str) -> None:
    """Warn when ``config`` asks for bf16 on a CPU without bf16 matrix instructions (amx_bf16,
    avx512_bf16): torch then runs bf16 matrix products in a reference kernel, on an AMD EPYC Zen 3
    40-60x slower than float32 (measured with 512 and 2048 matmuls on one core), so a bf16 budget takes days."""
    if config.precision == "bf16" and device == "cpu" and not bf16_instructions():
        warnings.warn("precision='bf16' on a CPU without bf16 matrix instructions (amx_bf16, avx512_bf16): "
                      "its matrix products run in a slow reference kernel (40-60x slower than fp32); "
                      "override precision='fp32' for a float32 run (a different config)", RuntimeWarning,
                      stacklevel=3)


#: How a training step runs: "eager" (plain PyTorch) or "compiled" (``torch.compile`` of the
#: encoder forward and the loss, backward included; inductor fuses the elementwise work --
#: BatchNorm, ReLU, the loss's exp/max chain -- into loops around the matrix products). Both compute
#: the same maths; float rounding differs. Not part of a config: the step is recorded in a result's
#: timing. Measured on an AMD EPYC Zen 4 (one thread, batch 2000): compiled is 1.09x faster than
#: eager in fp32 and 0.90x (slower) in bf16, after 20-50 s of compilation per config and process
#: (``cldiv bench synthetic --compile``), so "eager" is the default. Inductor keeps compiled graphs in
#: its on-disk cache (``torch._inductor.config.fx_graph_cache``, on by default), so a later process
#: with the same shapes reuses them.
STEP_MODES = ("eager", "compiled")
STEP_MODE_VARIABLE = "CLDIV_STEP"


def step_mode() -> str:
    """The step mode of this process: $CLDIV_STEP (one of STEP_MODES), "eager" if unset."""
    mode = os.environ.get(STEP_MODE_VARIABLE, "eager")
    check_choice(STEP_MODE_VARIABLE, mode, STEP_MODES)
    return mode


def make_step(config: SyntheticConfig, device: str = "cpu", mode: str | None = None):
    """(model, step, stateful): ``step()`` draws a fresh batch, takes one Adam step, returns the loss;
    ``stateful``: the optimizer and the data stream, whose states with the model's make a run's state.

    ``mode``: one of STEP_MODES (default: ``step_mode()``). The loss is returned detached and
    not read, so the loop never waits on it.
    """
    mode = step_mode() if mode is None else mode
    check_choice("mode", mode, STEP_MODES)
    warn_if_slow_bf16(config, device)
    model = build_model(config, device)
    model.train()
    fused = device.startswith("cuda") or device == "cpu"
    optimizer = torch.optim.Adam(model.encoder.parameters(), lr=config.lr, fused=fused)
    data = random_stream(config.seed, DATA_STREAM, device)

    def objective(batch) -> Tensor:
        return contrastive_loss(model, config, batch)

    if mode == "compiled":
        objective = torch.compile(objective, dynamic=False)

    def step() -> Tensor:
        with autocast(config, device):
            loss = objective(sample_batch(config, data, device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.detach()

    return model, step, {"optimizer": optimizer, "data": data}


def train(
    config: SyntheticConfig,
    *,
    device: str | None = None,
    progress: bool = False,
    return_model: bool = False,
) -> dict[str, Any]:
    """Train h = f ∘ g under ``config``; return {'metrics', 'curves', 'timing'} (and 'model').

    curves: iteration, training-batch loss and held-out R^2 on a fixed evaluation set, every
    ``eval_every`` iterations and at the end. Deterministic on CPU for a given seed. With
    ``$CLDIV_STATES`` set, the run continues a saved shorter run and keeps its own final state
    (``cldiv.runs.states``); ``timing.continued_from`` then names the shorter run.
    """
    device = device or default_device()
    model, step, stateful = make_step(config, device)
    z_eval_fit, z_eval_test = evaluation_latents(config, device)

    losses = torch.empty(config.iterations, device=device)
    curve: dict[str, list] = {"iteration": [], "loss": [], "r2": []}
    first, earlier_seconds, timing = 0, 0.0, {}
    saved = latest_state(config, "iterations", config.eval_every)
    if saved is not None:
        model.load_state_dict(saved["model"])
        stateful["optimizer"].load_state_dict(saved["optimizer"])
        stateful["data"].set_state(saved["data"])
        curve, first, earlier_seconds = saved["curve"], saved["config"]["iterations"], saved["train_seconds"]
        timing["continued_from"] = continued_from(saved, "iterations")
    machines = machines_so_far(saved, device)
    start = time.perf_counter()

    def state() -> dict[str, Any]:
        return {"model": model.state_dict(), "optimizer": stateful["optimizer"].state_dict(),
                "data": stateful["data"].get_state(), "curve": curve, "machines": machines,
                "train_seconds": earlier_seconds + time.perf_counter() - start}

    checkpoints = Checkpoints(config, "iterations", config.eval_every)
    bar = tqdm(range(first, config.iterations), disable=None if progress else True, desc=_label(config), leave=False)
    for it in bar:
        losses[it] = step()
        if (it + 1) % config.eval_every == 0 or it + 1 == config.iterations:
            curve["iteration"].append(it + 1)
            curve["loss"].append(round(float(losses[it]), 5))
            curve["r2"].append(round(curve_point(model, z_eval_fit, z_eval_test), 5))
            bar.set_postfix(loss=curve["loss"][-1], r2=curve["r2"][-1])
            checkpoints.offer(it + 1, state)
    final = state()
    seconds = final["train_seconds"]
    save_state(config, "iterations", final)
    checkpoints.close(saved)
    result = training_result(model, config, device, curve, float(losses[-1]), seconds, step=step_mode(), **timing)
    if return_model:
        result["model"] = model
    return result


def _label(config: SyntheticConfig) -> str:
    cond = "holds" if config.d_fixed == 0 else f"d_fixed={config.d_fixed}"
    return f"{config.process}/{config.encoder}/{cond}/{config.loss}/seed{config.seed}"


def run_synthetic(config: SyntheticConfig, *, progress: bool = False) -> tuple[dict, str]:
    """``store.get_or_run`` adapter: (result without the model, device)."""
    device = default_device()
    return train(config, device=device, progress=progress), device


def run_all(
    configs: Iterable[SyntheticConfig], store=None, *, workers: int = 1, progress: bool = True
) -> list[dict]:
    """Load or compute every config (resumable: finished configs are skipped).

    ``workers`` > 1 runs the missing configs in that many processes (``cldiv.runs.executor``), each
    with usable CPUs // workers threads; results are bitwise those of a single process with the
    same thread count.
    """
    store = store or ResultStore.default()
    configs = list(configs)
    if workers > 1:
        return run_sweep(configs, run_synthetic, store=store, workers=workers, progress=progress)
    records = []
    bar = tqdm(configs, disable=None if progress else True, desc="configs")
    for config in bar:
        bar.set_postfix_str(_label(config))
        records.append(store.get_or_run(config, run_synthetic))
    return records
