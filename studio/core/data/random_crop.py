"""The random crop of image augmentation, as a Keras layer whose class is made on first use, as
it loads Keras (the exported script carries the class's source)."""

import functools


def random_crop_resize(**kwargs):
    """A ``RandomCropResize`` layer with ``kwargs``."""
    return _crop_class()(**kwargs)


@functools.cache
def _crop_class():
    import keras
    import tensorflow as tf

    class RandomCropResize(keras.layers.Layer):
        """Crop a random window of ``1 - fraction`` of each image's size and resize it back."""

        def __init__(self, fraction, seed=None, **kwargs):
            super().__init__(**kwargs)
            self.fraction = fraction
            self.seed = seed
            self.generator = keras.random.SeedGenerator(seed)

        def call(self, images, training=True):
            if not training:
                return images
            images = tf.convert_to_tensor(images)
            batch = tf.shape(images)[0]
            size = images.shape[1:3] if None not in images.shape[1:3] else tf.shape(images)[1:3]
            corner = keras.random.uniform((batch, 2), 0.0, self.fraction, seed=self.generator)
            boxes = tf.concat([corner, corner + (1.0 - self.fraction)], axis=1)
            return tf.image.crop_and_resize(images, boxes, tf.range(batch), size)

        def compute_output_shape(self, input_shape):
            return input_shape

    return RandomCropResize
