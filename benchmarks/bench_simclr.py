"""Throughput of the SimCLR experiment's parts (paper Section 5), in images per second.

    python3 benchmarks/bench_simclr.py [--budget cpu] [--batch 250] [--steps 5] [--threads 1] [--device cpu]

Measures, on one device:
- augmentation: ``cldiv.images.augment.augment_batch`` for each regime (per-image parameters, batched);
- training: one SimCLR step (augment view 2, encode both views, NT-Xent, Adam) per encoder at the
  budget's size, in training images (pairs) per second;
- data: generating the shapes image set.
Each number is the median over ``--steps`` timed repetitions after one warm-up.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from cldiv.images.augment import REGIMES, augment_batch, regime_transforms
from cldiv.images.encoders import IMAGE_ENCODERS, make_image_encoder, parameter_count
from cldiv.images.data import shapes_dataset
from cldiv.budgets import BUDGET_NAMES, overrides
from cldiv.images.simclr import nt_xent


def _median_seconds(fn, steps: int, device: str) -> float:
    fn()  # warm-up
    times = []
    for _ in range(steps):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", default="cpu", choices=BUDGET_NAMES)
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device, batch = args.device, args.batch
    report: dict = {"device": device, "threads": torch.get_num_threads(), "batch": batch,
                    "budget": args.budget, "torch": torch.__version__}

    start = time.perf_counter()
    data = shapes_dataset(max(batch, 2000), 0)
    report["generate_images_per_s"] = len(data) / (time.perf_counter() - start)
    x = data.float_images(slice(0, batch), device)

    rng = torch.Generator().manual_seed(0)
    report["augment_images_per_s"] = {
        regime: batch / _median_seconds(lambda: augment_batch(x, regime_transforms(regime), rng), args.steps, device)
        for regime in REGIMES
    }

    report["train_step_images_per_s"] = {}
    report["parameters"] = {}
    transforms = regime_transforms("all")
    for name in IMAGE_ENCODERS:
        size = overrides("simclr", args.budget, name)
        torch.manual_seed(0)
        encoder = make_image_encoder(name, size["width"], size["depth"]).to(device).train()
        optimiser = torch.optim.Adam(encoder.parameters(), lr=3e-4)

        def step():
            view2 = augment_batch(x, transforms, rng)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.startswith("cuda")):
                z = encoder(torch.cat([x, view2]))
            loss = nt_xent(z[:batch], z[batch:], 0.5)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()

        report["train_step_images_per_s"][name] = batch / _median_seconds(step, args.steps, device)
        report["parameters"][name] = parameter_count(encoder)

    if args.json:
        print(json.dumps(report))
        return
    print(f"device {device}, {report['threads']} threads, batch {batch}, budget '{args.budget}', torch {torch.__version__}")
    print(f"generate shapes: {report['generate_images_per_s']:,.0f} images/s")
    for regime, v in report["augment_images_per_s"].items():
        print(f"augment {regime:8s}: {v:,.0f} images/s")
    for name, v in report["train_step_images_per_s"].items():
        print(f"SimCLR step, {name:8s} ({report['parameters'][name]:,} parameters, regime all): {v:,.0f} images/s")


if __name__ == "__main__":
    main()
