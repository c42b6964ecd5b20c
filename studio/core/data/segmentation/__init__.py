"""Semantic segmentation datasets: images with masks of class indices per pixel."""
