"""``python -m flows.cli``."""

import sys

from . import main

sys.exit(main())
