import sys

from seawall.cli import main

sys.exit(main())
