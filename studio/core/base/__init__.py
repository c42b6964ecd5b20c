"""Ground floor: atomic files, downloads, archives read under caps, messages for people,
preferences, the workspace's paths and TensorFlow's start-up settings. Imports nothing else of
Layer Studio."""
