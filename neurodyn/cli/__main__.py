"""``python -m neurodyn.cli``."""

import sys

from . import main

sys.exit(main())
