"""``python -m memlab.cli``: the ``memlab`` command."""

from __future__ import annotations

import sys

from memlab.cli import main

sys.exit(main())
