"""``python -m python_ingest COMMAND``: the command line of the contract (docs/contract.md), whose
subcommands live in package `cdc_cli`. An entry point, not part of landing: nothing imports it."""

from __future__ import annotations

import sys

from cdc_cli import main

sys.exit(main())
