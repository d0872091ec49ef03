"""``python -m datbench_cli`` runs the same program as the ``datbench`` console script."""

from datbench_cli.cli.app import console_main

if __name__ == "__main__":
    console_main()
