"""A world model's dream image out of TensorBoard into a PNG: the open-loop prediction from a real
context that the SimPLe and Dreamer loops write at each checkpoint (model, truth and their
difference side by side, one row per step).

    python scripts/dream_image.py RUN/world_model/dream OUTPUT.png [--step=N]   # default: the newest
"""

import argparse
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

TAG = "dream_real_difference"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("event_dir", help="a run's world_model/dream")
    parser.add_argument("output", help="the PNG to write")
    parser.add_argument("--step", type=int, help="the real step (Dreamer) or world-model step (SimPLe) of the image")
    args = parser.parse_args()
    events = EventAccumulator(args.event_dir, size_guidance={"tensors": 0})
    events.Reload()
    if TAG not in events.Tags()["tensors"]:
        sys.exit(f"no dream image in {args.event_dir}: give a run's world_model/dream, written at its checkpoints")
    images = {event.step: event for event in events.Tensors(TAG)}
    step = max(images) if args.step is None else args.step
    if step not in images:
        sys.exit(f"no dream image at step {step} in {args.event_dir}: it has steps {sorted(images)}")
    # An image summary's tensor holds width, height, then the encoded PNG.
    with open(args.output, "wb") as f:
        f.write(images[step].tensor_proto.string_val[2])
    print(f"wrote {args.output} (step {step})")


if __name__ == "__main__":
    main()
