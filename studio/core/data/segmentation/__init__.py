"""Semantic-segmentation datasets: images with masks of class indices (``reading``), in three
layouts (``layouts``), their mask kinds and colour tables (``mask_kinds``), their health report
(``health``) and their record (``record``); joint augmentation of images and masks
(``augment``) and the offline demo set (``demo``).

Bad input, and what becomes of it:

- counted in the health report, the dataset still usable: an image without a mask, a mask
  without an image, a mask of another size than its image, a mask that cannot be read or holds
  no class indices (a 16-bit mask past 8 bits, 300 distinct values: its image is left out);
  values that are no class, colours the colour table lacks (those pixels ignored); a JPEG mask
  (read, with a warning that its values are wrong along edges); a 16-bit mask whose values fit
  8 bits; a mask of background alone; a class no mask holds; strong class imbalance;
- a DataError in one line naming the file, nothing read: a folder that holds no segmentation
  layout (or is a classification folder), an RGB mask without a colour table, an unreadable or
  contradictory ``labelmap.txt`` or ``classes.txt``.
"""
