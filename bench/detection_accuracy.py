"""Time to accuracy of the small detector template on the detection demo set: the best
validation mAP@0.5 reached within a wall-clock budget, and when it first reached the target.

Opens the project as the gallery does (``from_template("small_detector")``: the graph of
``templates.small_detector``, the settings of ``small_detector_training``) on the demo set (a
``detection`` DatasetChoice without a path: 4,000 training and 500 validation images of 128 ×
128 with 1 to 5 digits), and trains it as ``time_to_score`` does; the scores are the
``val_map50`` the mAP callback logged in the run's history. Issue 23's target: mAP@0.5 at
least 0.90 within 5 minutes on 2 cores.

    .venv/bin/python bench/detection_accuracy.py [--budget 300] [--target 0.9] [--keep DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.core.base.runtime import configure_environment  # noqa: E402

configure_environment()

from bench import time_to_score  # noqa: E402
from studio.core.data.detection.demo import demo_set  # noqa: E402
from studio.core.data.detection.source import DEMO_IMAGES  # noqa: E402

if __name__ == "__main__":
    time_to_score.main(__doc__, "small_detector", "val_map50", 0.9,
                       lambda: demo_set(DEMO_IMAGES["train"], DEMO_IMAGES["validation"]))
