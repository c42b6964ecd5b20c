"""Object detection: boxes as labels, a CenterNet-style head's targets and decoding, and
COCO-style average precision."""
