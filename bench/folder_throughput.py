"""Training from an image folder against training from in-memory arrays.

Writes MNIST-10k as PNG files (one subfolder per digit), then trains the demo CNN with
horizontal flip and rotation augmentation from the bundled arrays and from the folder
(with the default ``auto`` cache, which for these 8 MB of decoded images is the disk cache;
without a cache; and with the memory cache), alternating the arms over
several rounds: same augmentation, split sizes, batch size, model and the trainer's own
pipelines (``studio.core.data.pipelines``). Compares training throughput (samples per second over
whole epochs, validation included, first epoch left out as it includes tracing and filling
caches): each round runs every arm once, and the ratio to the arrays is taken within each
round (so that load from other processes hits both sides), then its median over rounds.
Target: the folder reaches at least 0.9 of the arrays.

    .venv/bin/python bench/folder_throughput.py [--rounds 5] [--epochs 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from dataclasses import replace
from pathlib import Path

from studio.core.base.runtime import configure_environment

configure_environment()

import keras  # noqa: E402
from PIL import Image  # noqa: E402
from trainer_throughput import EpochTimer  # noqa: E402  (this script's folder is on the path)

from studio.core.build.keras_model import build_model, compile_model  # noqa: E402
from studio.core.data import sources as data  # noqa: E402
from studio.core.data.pipelines import make_pipelines  # noqa: E402
from studio.core.project.document import Augmentation, DatasetChoice  # noqa: E402
from studio.core.project.templates import demo_project  # noqa: E402


def write_png_folder(root: Path) -> None:
    """MNIST-10k as ``root/<digit>/<index>.png``."""
    x, y = data.load_arrays(DatasetChoice())
    for digit in range(10):
        (root / str(digit)).mkdir(parents=True)
    for i, (image, label) in enumerate(zip(x, y, strict=True)):
        Image.fromarray(image[..., 0]).save(root / str(label) / f"{i:05d}.png")


def run(choice: DatasetChoice, epochs: int) -> tuple[list[float], int]:
    """Epoch durations of training the demo CNN on ``choice``, and the training samples."""
    project = demo_project()
    settings = project.training
    batch_size = settings.batch_size
    loaded = data.load(choice)
    keras.utils.set_random_seed(settings.seed)
    pipes = make_pipelines(loaded, choice, batch_size, settings.seed)
    model = build_model(project.graph, loaded.info, project.name)
    compile_model(model, project.graph, settings)
    timer = EpochTimer()
    model.fit(epochs=epochs, verbose=0, callbacks=[timer], **pipes.fit_arguments())
    return timer.seconds, loaded.size("train")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    augmentation = Augmentation(flip_horizontal=True, rotation=10.0)
    arrays = replace(demo_project().dataset, augmentation=augmentation)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mnist-png"
        write_png_folder(root)
        folder = DatasetChoice(source="folder", path=str(root), image_size=[28, 28],
                               color="grayscale", augmentation=augmentation)
        os.environ["LAYER_STUDIO_HOME"] = str(Path(tmp) / "home")  # the disk cache goes there
        arms = {"arrays": arrays, "folder, auto cache": folder,
                "folder, no cache": replace(folder, cache="none"),
                "folder, memory cache": replace(folder, cache="memory")}
        rounds: list[dict[str, float]] = []  # samples/s of each arm, median epoch, per round
        for round_index in range(args.rounds):
            order = list(arms)
            order = order[round_index % len(order):] + order[:round_index % len(order)]
            rounds.append({})
            for name in order:
                epoch_seconds, samples = run(arms[name], args.epochs)
                rounds[-1][name] = samples / statistics.median(epoch_seconds[1:])
                print(f"round {round_index + 1} {name:20s} epochs "
                      + " ".join(f"{s:.3f}s" for s in epoch_seconds[1:]), flush=True)
    for name in arms:
        rate = statistics.median(r[name] for r in rounds)
        print(f"{name:20s} {rate:,.0f} samples/s (median of {args.rounds} rounds)")
    for name in list(arms)[1:]:
        ratios = [r[name] / r["arrays"] for r in rounds]
        print(f"ratio {name} / arrays: {statistics.median(ratios):.3f} (median of rounds: "
              + " ".join(f"{x:.2f}" for x in ratios) + "; target >= 0.9)")


if __name__ == "__main__":
    main()
