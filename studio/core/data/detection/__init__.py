"""Object-detection datasets: images with boxes, in the YOLO, Pascal VOC, COCO and KITTI label
formats (``formats.read_detection``, ``detect_format``, ``write_detection``), their health
report (``health``), the offline demo set drawn from MNIST-10k (``demo``), and augmentation
that moves the boxes with the images (``augment``).

Bad input, and what becomes of it:

- counted in the health report, the dataset still usable: a label line of the wrong length (4
  numbers for YOLO, 14 for KITTI), a word where a number belongs, a label file over its size cap
  or declaring a DOCTYPE or ENTITY (its image is left out); NaN or infinite coordinates, a class
  id beyond the class names, a zero-area box, a box wholly outside its image, a duplicate (the
  box is dropped); a box reaching outside (clipped); more than 1,000 boxes on an image (the
  first 1,000 kept); a label file without an image; an image without a label file, or whose
  label lists no object (a background image);
- a DataError in one line naming the file, nothing read: a folder that holds no labels of the
  format asked for (or of any, or is a classification folder), a COCO file whose annotations
  point to image ids it does not list, invalid JSON or YAML, unusable class names.
"""
