"""The ``cldiv`` command: re-execute chapters, regenerate golden notebooks.

    cldiv chapter <name> [-p NAME VALUE ...] [-o OUT.ipynb]
    cldiv golden [NAME ...]
    cldiv list
"""

from __future__ import annotations

import argparse
import sys

from cldiv import chapters


def _chapter(args: argparse.Namespace) -> None:
    params = {name: chapters.parse_value(value) for name, value in args.param}
    out = chapters.execute_chapter(args.name, params, args.output or f"{args.name}.ipynb")
    print(out)


def _golden(args: argparse.Namespace) -> None:
    for name in args.names or sorted(chapters.golden_parameters()):
        print(chapters.write_golden(name))


def _list(args: argparse.Namespace) -> None:
    for name in chapters.chapter_names():
        print(f"{name}: {chapters.chapter_parameters(name)}")


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
    p.set_defaults(func=_golden)

    p = sub.add_parser("list", help="list chapters and their parameters")
    p.set_defaults(func=_list)
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
