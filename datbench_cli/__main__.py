"""The ``datbench`` program (the console script, and ``python -m datbench_cli``).

The command-line modules take a moment to load and the command line a moment to build; a
Ctrl-C meanwhile ends the program with one line and exit status 130, as it does in a command,
instead of a traceback.
"""

import sys


def main() -> None:
    """Load the command line and run it."""
    try:
        from datbench_cli.cli.app import console_main

        console_main()
    except KeyboardInterrupt:  # before a command took charge of Ctrl-C (it says more itself)
        sys.stderr.write("error: interrupted\n")
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
