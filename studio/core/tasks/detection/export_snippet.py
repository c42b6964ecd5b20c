"""The Python lines an exported detector's README gives to turn the head's output into boxes.

The export holds the network up to the DetectionHead's raw output map (an int8 export in
three parts, see ``split_head``, joined here); decoding and NMS are not in the exported graph
(every runtime then runs the same plain convolutions, int8 included) but in these NumPy lines,
which follow ``decode.decode`` step by step with the run's settings from
``preprocessing.json``. The README's image is squashed to the input size, so boxes go back to
its pixels by scaling.
"""

SNIPPET = '''# The model answers with the DetectionHead's raw output map: box decoding and
# non-maximum suppression are not in the exported graph but here, in NumPy, with the run's
# settings.
decoding = prep["decoding"]  # the head's stride and settings, as trained
if isinstance(outputs, list):  # int8: heatmaps, offsets and log sizes apart, each with its
    outputs = np.concatenate(outputs, axis=-1)  # own int8 scale; joined, the head's map


def sigmoid(v):
    return 0.5 * (1 + np.tanh(0.5 * np.asarray(v, np.float64)))


def iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


def boxes_of(output, image_width, image_height):
    """The boxes in one image's head output (rows x cols x (classes + 4)), surest first, as
    (class name, score, x_min, y_min, x_max, y_max) in the image's pixels."""
    classes = output.shape[-1] - 4  # class heatmaps, then centre offset x, y and log size w, h
    heat = sigmoid(output[..., :classes])
    rows, cols = heat.shape[:2]
    padded = np.pad(heat, ((1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    window = np.max([padded[i:i + rows, j:j + cols] for i in range(3) for j in range(3)], axis=0)
    scores = np.where(heat >= window, heat, 0.0).reshape(-1)  # peaks of their 3 x 3 window
    best = np.argsort(-scores, kind="stable")[:decoding["max_boxes"]]
    best = best[scores[best] >= decoding["score_threshold"]]
    cell, kind = np.divmod(best, classes)
    row, column = np.divmod(cell, cols)
    at = np.asarray(output[row, column], np.float64)
    stride = decoding["stride"]
    centre_x = (column + sigmoid(at[:, classes])) * stride
    centre_y = (row + sigmoid(at[:, classes + 1])) * stride
    half = np.exp(np.clip(at[:, classes + 2:classes + 4], -20, 20)) * stride / 2
    input_height, input_width = decoding["input_size"]
    scale = [image_width / input_width, image_height / input_height] * 2
    corners = np.stack([centre_x - half[:, 0], centre_y - half[:, 1],
                        centre_x + half[:, 0], centre_y + half[:, 1]], axis=1)
    corners = np.clip(corners * scale, 0, [image_width, image_height] * 2)
    kept = []  # non-maximum suppression within each class, surest first
    for i in range(len(best)):
        if all(kind[j] != kind[i] or iou(corners[i], corners[j]) <= decoding["nms_iou"]
               for j in kept):
            kept.append(i)
    return [(labels[kind[i]], float(scores[best[i]]), *map(float, corners[i])) for i in kept]


found = boxes_of(outputs[0], *image.size)
for name, score, *box in found:
    print(name, f"{score:.2f}", [round(v, 1) for v in box])
'''
