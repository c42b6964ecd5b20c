"""Object-detection datasets: images with boxes, in the YOLO, Pascal VOC, COCO and KITTI label
formats, their health report, and the offline demo set made from MNIST-10k."""
