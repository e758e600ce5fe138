"""Fetch and build data sets ahead of a sweep: ``python -m src.data NAME [NAME ...]``.

NAME is a file of ``conf/dataset``; the raw files go to ``paths.data_dir`` (``data/`` in a checkout, the
user's cache directory for an installed copy: :func:`src.resolvers.default_data_dir`; the mirror from
``REPRO_DATA_MIRROR``) and derived features are built once, so that the parallel jobs of a sweep find a
warm cache instead of each building the same features.

Exit status: 0 when every data set was built (or with ``--list``); 2 on an unknown name (one ``[ERROR]``
line, nothing fetched), a data error, or when no name is given (then the names that can be fetched are
listed).
"""

import argparse
import difflib
import logging
import sys

from ..config_dir import CONF_DIR
from ..errors import UserError
from .named import load_named

logger = logging.getLogger(__name__)


def available() -> dict[str, str]:
    """The names that can be fetched (the files of ``conf/dataset``), each with its one-line description."""
    names = {}
    for path in sorted((CONF_DIR / "dataset").glob("*.yaml")):
        first = path.read_text().splitlines()[:1]
        names[path.stem] = first[0].lstrip("# ").strip() if first and first[0].startswith("#") else ""
    return names


def listing(names: dict[str, str]) -> str:
    width = max(map(len, names), default=0)
    return "\n".join(f"  {name:<{width}}  {text}".rstrip() for name, text in names.items())


def parser(names: dict[str, str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__package__}", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fetch the raw files of data sets and build their derived features ahead of a sweep.",
        epilog="data sets (conf/dataset):\n" + listing(names) + "\n\nThe raw files go to paths.data_dir "
               "(data/ in a checkout, the user's cache directory for an installed copy); set "
               "REPRO_DATA_MIRROR=/path/to/datasets to copy them from a mirror instead of downloading.\n"
               "Exit status: 0 when every data set was built, 2 on an unknown name, a data error, or no name.")
    parser.add_argument("names", nargs="*", metavar="NAME", help="data sets to fetch and build, e.g. yale orl")
    parser.add_argument("--list", action="store_true", help="print the names that can be fetched and exit")
    return parser


def unknown_message(name: str, names) -> str:
    close = difflib.get_close_matches(name, list(names), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"dataset '{name}' is not one of {', '.join(names)}{hint}"


def main(argv: list[str] | None = None) -> int:
    names = available()
    args = parser(names).parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    if args.list:
        print("\n".join(names))
        return 0
    if not args.names:
        print(f"usage: python -m {__package__} NAME [NAME ...]   (--help for more)\n"
              "data sets that can be fetched (conf/dataset):\n" + listing(names))
        return 2
    wrong = [name for name in args.names if name not in names]
    if wrong:  # every name is checked before anything is fetched
        logger.error("%s", unknown_message(wrong[0], names))
        return 2
    for name in args.names:
        try:
            dataset = load_named(name)
        except UserError as exc:
            logger.error("%s", exc)
            return 2
        logger.info("%s: %d samples x %d features, %d classes", name, *dataset.X.shape, dataset.n_classes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
