"""Semantic segmentation: a class for every pixel, masks as labels, pixel accuracy, IoU and
Dice."""
