"""Time to accuracy of the small U-Net segmentation template on the segmentation demo set: the
best validation mean IoU reached within a wall-clock budget, and when it first reached the
target.

Opens the project as the gallery does (``from_template("small_unet_segmenter")``: the graph of
``templates.small_unet_segmenter``, the settings of ``small_unet_training``) on the demo set (a
``segmentation`` DatasetChoice without a path: 4,000 training and 500 validation grey images of
64 × 64 with 1 to 3 digits, 11 classes) and trains it as ``time_to_score`` does; the scores are
the ``val_mean_iou`` the trainer logged in the run's history. Issue 24's target: mean IoU at
least 0.80 within 5 minutes on 2 cores.

    .venv/bin/python bench/segmentation_accuracy.py [--budget 300] [--target 0.8] [--keep DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.core.base.runtime import configure_environment  # noqa: E402

configure_environment()

from bench import time_to_score  # noqa: E402
from studio.core.data.segmentation.demo import demo_set  # noqa: E402
from studio.core.data.segmentation.source import DEMO_IMAGES  # noqa: E402

if __name__ == "__main__":
    time_to_score.main(__doc__, "small_unet_segmenter", "val_mean_iou", 0.8,
                       lambda: demo_set(DEMO_IMAGES["train"], DEMO_IMAGES["validation"]))
