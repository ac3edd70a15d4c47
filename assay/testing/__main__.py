"""``python -m assay.testing``: run the fake OpenAI server as its own process."""

from assay.testing._server import main

raise SystemExit(main())
