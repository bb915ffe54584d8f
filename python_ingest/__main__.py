from __future__ import annotations

import sys

from python_ingest.cli import main

sys.exit(main())
