"""``python -m assay.testing``: run the fake OpenAI server as its own process."""

from assay.testing._cli import main

raise SystemExit(main())
