"""The ``cldiv`` command: re-execute chapters, regenerate golden notebooks.

    cldiv chapter <name> [-p NAME VALUE ...] [-o OUT.ipynb]
    cldiv golden [NAME ...] [--retrain]
    cldiv list
    cldiv synthetic [--budget cpu] [--processes ...] [--seeds N] [--columns ...] [--set FIELD VALUE ...]
                    [--workers N | --batched] [--compile]
    cldiv gpu-run [--budget paper] [--columns holds violated inverse] [--processes ...] [--seeds N]
                  [--max-minutes M] [--device cuda]
    cldiv bench synthetic [--batch 2000] [--iterations 50] [--json] [--compile] [--matmul-size 2048]
    cldiv bench <grouped_negatives|budgets> [--iterations N] [--output REPORT.json]
    cldiv sweep <constraint_ratio|progressive_violation> [--budget cpu] [--executor local|ray]
                [--address ADDR] [--workers N] [--gpus-per-task G] [-p NAME VALUE ...]
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from typing import Any

from cldiv import budgets
from cldiv.book import chapters, golden
from cldiv.images import DATASETS, HEADLINE_DATASET, IMAGE_ENCODERS, REGIMES, GENERATED_DATASETS
from cldiv.images.simclr import budget_choice_configs, run_simclr, simclr_configs
from cldiv.runs.executor import run_sweep
from cldiv.runs.store import ResultStore
from cldiv.synthetic import bench
from cldiv.synthetic.batched import run_batched
from cldiv.synthetic.generators import SYNTHETIC_PROCESSES
from cldiv.synthetic.gpu_run import gpu_run
from cldiv.synthetic.sweep_findings import table7_protocol_markdown, table7_protocol_rows
from cldiv.synthetic.sweeps import PROGRESSIVE_PROCESSES, format_summary, run_named_sweep, table7_code_config
from cldiv.synthetic.studies import chapter_runs, unique_runs
from cldiv.synthetic.table1 import COLUMNS, markdown_table, summarise, table_configs
from cldiv.synthetic.train import STEP_MODE_VARIABLE, run_all
from cldiv.budgets import BUDGET_NAMES


def parse_value(text: str) -> Any:
    """A command-line value as a Python literal if it is one (2, 0.5, [1, 2], True), else a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _chapter(args: argparse.Namespace) -> None:
    params = {name: parse_value(value) for name, value in args.param}
    out = chapters.execute_chapter(args.name, params, args.output or f"{args.name}.ipynb")
    print(out)


def _golden(args: argparse.Namespace) -> None:
    if args.retrain:
        if args.names:
            raise ValueError("--retrain regenerates every golden notebook; give no chapter names with it")
        golden.clear_golden_store()
    golden.write_spread_runs()
    for name in args.names or sorted(golden.golden_parameters()):
        print(golden.write_golden(name))


def _list(args: argparse.Namespace) -> None:
    for name in chapters.chapter_names():
        print(f"{name}: {chapters.chapter_parameters(name)}")


def _synthetic(args: argparse.Namespace) -> None:
    if args.compile:
        os.environ[STEP_MODE_VARIABLE] = "compiled"
    overrides = {name: parse_value(value) for name, value in args.set}
    kwargs = {"processes": args.processes} if args.processes else {}
    configs = table_configs(args.budget, seeds=args.seeds, columns=args.columns or tuple(COLUMNS),
                            **kwargs, **overrides)
    start = time.perf_counter()
    if args.batched:
        records = run_batched(configs)
    else:
        records = run_all(configs, workers=args.workers)
    if not (args.columns or args.seeds or args.set):  # the chapters' other runs of this budget
        run_all(unique_runs(chapter_runs(args.budget, args.processes or SYNTHETIC_PROCESSES)), workers=args.workers)
    print(f"{len(records)} runs ready in {time.perf_counter() - start:.0f} s")
    summary = summarise(records, store=ResultStore.default())
    processes = sorted({c.process for c in configs})
    print(markdown_table(summary, processes, [c for c in COLUMNS if any(k[0] == c for k in summary)]))


def _bench(args: argparse.Namespace) -> None:
    import json

    import torch

    if args.target == "synthetic":
        report = bench.run_benchmark(args.batch, args.iterations or 50, memory=not args.no_memory,
                                     threads=args.threads, compiled=args.compile, matmul_size=args.matmul_size)
        print(json.dumps(report) if args.json else bench.format_report(report))
        return
    torch.set_num_threads(args.threads or 1)
    if args.target == "grouped_negatives":
        report = bench.grouped_negatives_timing(args.iterations or 10)
        print(bench.grouped_negatives_markdown(report))
    else:
        report = bench.budget_step_timing(args.iterations or 5)
        for experiment in sorted({r["experiment"] for r in report["rows"]}):
            print(f"{experiment}\n{bench.budget_cost_markdown(report, experiment)}\n")
    if args.output:
        bench.save_report(report, args.output)


def _gpu_run(args: argparse.Namespace) -> None:
    """Table 1's cells at a budget on the device at hand, stopping before --max-minutes."""
    report = gpu_run(args.budget, args.columns, args.processes, args.seeds, max_minutes=args.max_minutes,
                     device=args.device)
    if report["unfinished"]:
        print(f"{len(report['unfinished'])} runs not finished: call the same command again to resume")


def _simclr(args: argparse.Namespace) -> None:
    """Run (or load) the SimCLR grid of a budget into the result store (resumable), then list it."""
    import functools

    seeds = args.seeds if args.seeds is not None else range(budgets.budget("simclr", args.budget).seeds)
    configs = simclr_configs(args.budget, dataset=args.dataset, encoders=args.encoders,
                             regimes=args.regimes, seeds=seeds, epochs=args.epochs, n_train=args.n_train)
    if args.dataset in GENERATED_DATASETS:  # the chapter's runs behind the budget's choices
        configs += [c for _, _, c in budget_choice_configs(args.budget, args.dataset) if c not in configs]
    stored = [ResultStore.default().load(c) is not None for c in configs]
    run = functools.partial(run_simclr, data_root=args.data_root, download=args.download)
    records = run_sweep(configs, run, workers=args.workers, threads=args.threads or None)
    for config, record, was_stored in zip(configs, records, stored):
        m = record["metrics"]
        print(f"[{'stored' if was_stored else 'computed'}] {config.dataset} {config.encoder} / {config.regime} / "
              f"seed {config.seed}: probe accuracy best {m['probe_best']:.3f} "
              f"(at init {m['init_probe_best']:.3f}) final {m['probe_final']:.3f}"
              + (f", latent R^2 mean {m['latent_r2_mean']:.3f}" if "latent_r2_mean" in m else "")
              + f" ({record['provenance']['wall_time_s']:.0f} s)", flush=True)


def _sweep(args: argparse.Namespace) -> None:
    """Run (or load) a named sweep of Section 4 into the result store and print its summary."""
    params = {name: parse_value(value) for name, value in args.param}
    start = time.perf_counter()
    records = run_named_sweep(args.name, args.budget, args.executor, workers=args.workers,
                              address=args.address, gpus_per_task=args.gpus_per_task, **params)
    print(f"{len(records)} runs ready in {time.perf_counter() - start:.0f} s")
    print(format_summary(args.name, records, ResultStore.default()))


def _table7_code(args: argparse.Namespace) -> None:
    """Run (or load) the 10-D experiment at the authors' protocol for Table 7 and print it beside Table 7."""
    configs = [table7_code_config(process, d, seed, iterations) for seed in range(args.seeds)
               for iterations in args.iterations for process in args.processes for d in args.d_fixed]
    run_all(configs, workers=args.workers)
    print(table7_protocol_markdown(table7_protocol_rows(ResultStore.default(), args.processes, args.d_fixed,
                                                        args.iterations, range(args.seeds))))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cldiv", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("chapter", help="re-execute one chapter with new parameters (papermill)")
    p.add_argument("name", help="chapter name, e.g. setting (see `cldiv list`)")
    p.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="override a parameter of the chapter's parameters cell; repeatable")
    p.add_argument("-o", "--output", help="executed notebook to write (default: <name>.ipynb)")
    p.set_defaults(func=_chapter)

    p = sub.add_parser("golden", help="regenerate the nbval golden notebooks in tests/golden/")
    p.add_argument("names", nargs="*", help="chapters (default: all in tests/golden/parameters.json)")
    p.add_argument("--retrain", action="store_true",
                   help="empty the golden result store (tests/golden/results) first, so every run is retrained")
    p.set_defaults(func=_golden)

    p = sub.add_parser("synthetic", help="run (or load) the synthetic benchmark's cells for a budget",
                       description="Run (or load) Table 1's cells; without --columns, --seeds or --set, also "
                       "the other runs the synthetic and errata chapters show (cldiv.synthetic.studies.chapter_runs).")
    p.add_argument("--budget", default="cpu", choices=BUDGET_NAMES, help="named budget (default: cpu)")
    p.add_argument("--processes", nargs="*", help="generative processes (default: all five)")
    p.add_argument("--seeds", type=int, help="runs per cell (default: the budget's)")
    p.add_argument("--columns", nargs="*", help="holds violated adapted inverse inverse_holds (default: all)")
    p.add_argument("--set", nargs=2, action="append", default=[], metavar=("FIELD", "VALUE"),
                   help="override a SyntheticConfig field for every run; repeatable")
    p.add_argument("--workers", type=int, default=1, help="parallel processes (default: 1)")
    p.add_argument("--batched", action="store_true",
                   help="train runs of equal shapes as one batched model (the GPU path)")
    p.add_argument("--compile", action="store_true",
                   help="compiled training step (torch.compile; sets $CLDIV_STEP=compiled for the workers too)")
    p.set_defaults(func=_synthetic)

    p = sub.add_parser("bench", help="time training steps: synthetic (cldiv's step against a straightforward "
                       "loop), grouped_negatives (the support-corrected loss's negatives), budgets (each budget's cost)")
    p.add_argument("target", choices=["synthetic", "grouped_negatives", "budgets"])
    p.add_argument("--batch", type=int, default=2000, help="synthetic only")
    p.add_argument("--iterations", type=int, default=0,
                   help="timed iterations a case (default: synthetic 50, grouped_negatives 10, budgets 5)")
    p.add_argument("--json", action="store_true", help="synthetic only: print the report as one JSON object")
    p.add_argument("--no-memory", action="store_true", help="synthetic only: skip the peak-memory child runs")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (default: torch's choice for synthetic, 1 for the others)")
    p.add_argument("--compile", action="store_true", help="synthetic only: also time the compiled step of each precision")
    p.add_argument("--matmul-size", type=int, default=2048, help="synthetic only: side of the peak-GFLOP/s matmul")
    p.add_argument("--output", help="grouped_negatives, budgets: write the report here (JSON, atomically)")
    p.set_defaults(func=_bench)

    p = sub.add_parser("gpu-run", help="Table 1 at the paper's protocol on a GPU, batched, within a time limit",
                       description="Check the device and one training step against the CPU, then train the "
                       "missing runs of the chosen cells in batched groups into the result store, stopping "
                       "before --max-minutes with only complete results. Call again to resume.")
    p.add_argument("--budget", default="paper", choices=BUDGET_NAMES, help="named budget (default: paper)")
    p.add_argument("--columns", nargs="+", default=["holds", "violated", "inverse"],
                   help="InfoNCE columns of Table 1: holds violated inverse inverse_holds (default: the first three)")
    p.add_argument("--processes", nargs="+", default=None, help="generative processes (default: all five)")
    p.add_argument("--seeds", type=int, help="runs per cell (default: the budget's)")
    p.add_argument("--max-minutes", type=float, help="stop before this much wall time (default: no limit)")
    p.add_argument("--device", help="cuda, cuda:1 or cpu (default: cuda if available)")
    p.set_defaults(func=_gpu_run)

    p = sub.add_parser("sweep", help="run (or load) a named sweep of Section 4 into the result store")
    p.add_argument("name", help="constraint_ratio or progressive_violation")
    p.add_argument("--budget", default="cpu", choices=BUDGET_NAMES, help="named budget (default: cpu)")
    p.add_argument("--executor", default="local", help="local (process pool) or ray (default: local)")
    p.add_argument("--address", help="Ray cluster address (default: $RAY_ADDRESS, else a local instance)")
    p.add_argument("--workers", type=int, help="local processes (default: one per CPU core)")
    p.add_argument("--gpus-per-task", type=float, default=0.0, help="GPUs per Ray task (default: 0)")
    p.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="a sweep axis (processes, encoders, rhos, d_fixed, seeds) or a SyntheticConfig "
                        "field for every run; repeatable")
    p.set_defaults(func=_sweep)

    p = sub.add_parser("table7-code", help="the 10-D experiment at the authors' protocol for Table 7",
                       description="Run (or load) runs of cldiv.synthetic.sweeps.table7_code_config (the paper's "
                       "widths, N = M = 2000, lr 1e-4, the code's block order, map and sign coin) and print them "
                       "beside Table 7 (errata chapter).")
    p.add_argument("--iterations", nargs="+", type=int, default=[100], help="training lengths (default: 100)")
    p.add_argument("--d-fixed", nargs="+", type=int, default=list(range(11)), help="fixed coordinates (default: 0..10)")
    p.add_argument("--processes", nargs="+", default=list(PROGRESSIVE_PROCESSES), choices=PROGRESSIVE_PROCESSES)
    p.add_argument("--seeds", type=int, default=1, help="runs per point, seeds 0 .. seeds-1 (default: 1)")
    p.add_argument("--workers", type=int, default=1, help="parallel processes (default: 1)")
    p.set_defaults(func=_table7_code)

    p = sub.add_parser("list", help="list chapters and their parameters")
    p.set_defaults(func=_list)

    p = sub.add_parser("simclr", help="run the SimCLR image experiment (Figure 3) into the result store")
    p.add_argument("--budget", default="cpu", choices=BUDGET_NAMES, help="named budget (default: cpu)")
    p.add_argument("--dataset", default=HEADLINE_DATASET, choices=DATASETS,
                   help=f"image data set (default: {HEADLINE_DATASET})")
    p.add_argument("--encoders", nargs="+", default=list(IMAGE_ENCODERS), choices=IMAGE_ENCODERS)
    p.add_argument("--regimes", nargs="+", default=list(REGIMES), choices=REGIMES)
    p.add_argument("--seeds", nargs="+", type=int, help="seeds to run (default: the budget's, 0 .. seeds-1)")
    p.add_argument("--workers", type=int, default=1, help="parallel processes, one thread each on 2 cores (default: 1)")
    p.add_argument("--epochs", type=int, help="override the budget's SimCLR epochs")
    p.add_argument("--n-train", type=int, help="override the budget's number of training images")
    p.add_argument("--data-root", default="~/.cache/cldiv/data", help="where CIFAR-10 is (or goes)")
    p.add_argument("--download", action="store_true", help="download CIFAR-10 if it is missing")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads per worker (default: the usable CPUs shared among the workers)")
    p.set_defaults(func=_simclr)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except ValueError as error:
        sys.exit(f"cldiv: error: {error}")
    except Exception as error:  # a chapter cell failed: show the cell's own error, not a traceback
        if type(error).__name__ == "PapermillExecutionError":
            sys.exit(f"cldiv: the chapter failed: {error.ename}: {error.evalue}")
        raise


if __name__ == "__main__":
    main()
