"""The ``datbench`` program (the console script, and ``python -m datbench_cli``).

The command-line modules take a moment to load and the command line a moment to build; a
Ctrl-C meanwhile ends the program with one line and exit status 130, as it does in a command,
instead of a traceback. While the modules load, Ctrl-C is held back and felt as soon as they
have: a KeyboardInterrupt inside a C extension's initialisation can crash it (orjson's did, on
1 press in 300 between 0 and 0.45 s).
"""

import signal
import sys


def main() -> None:
    """Load the command line and run it."""
    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            from datbench_cli.cli.app import console_main
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        console_main()
    except KeyboardInterrupt:  # before a command took charge of Ctrl-C (it says more itself)
        sys.stderr.write("error: interrupted\n")
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
