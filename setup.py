from setuptools import find_packages, setup

setup(
    name="rlkit",
    version="0.1.0",
    description="Model-based (SimPLe world models) and model-free deep RL on TensorFlow 2 / Keras 3.",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["rlkit", "rlkit.*"]),
    python_requires=">=3.10",
    install_requires=[
        "tensorflow>=2.18",
        "tensorboard>=2.18",
        "gymnasium>=1.1",  # AutoresetMode.SAME_STEP
        "ale-py>=0.11.2",  # ships the Atari ROMs and the native AtariVectorEnv
        "opencv-python-headless>=4.8",  # frame resizing for gymnasium's AtariPreprocessing
        "absl-py>=2.1",
        "pygame>=2.5",
        "gin-config>=0.5",
        "google-cloud-storage>=2.14",
        "imageio>=2.31",  # evaluation videos and the player's recordings, as MP4
        "imageio-ffmpeg>=0.4.9",  # ships the ffmpeg binary imageio writes MP4 with
        "numpy>=1.26",
        # TensorFlow asks for ml_dtypes>=0.5.1; 0.7.0's extension takes 0.6-0.8 s more CPU to load
        # (3.67 against 3.03 CPU-s to import rlkit, tensorflow and keras: docs/benchmarks.md), paid
        # by every command and every TensorFlow start in the test suite.
        "ml_dtypes>=0.5.1,<0.7",
        "lz4>=4.0",  # the frame store's per-frame compression: decodes 3x faster than zlib
        "matplotlib>=3.8",  # learning curves (rlkit.rl.plot)
    ],
    extras_require={
        # pytest-xdist runs the suite on 3 workers (the README says why, on 2 cores); the
        # emulator is a local GCS for the gs:// tests.
        # MinAtar's miniature Atari games (game=minatar/breakout, ...); GPL-3.0.
        "minatar": ["minatar>=1.0.15"],
        # Hyperparameter search and benchmarks (lab --mode=search/benchmark) on Ray Tune, and
        # real envs on Ray actors (real_num_workers).
        "ray": ["ray[tune]>=2.40"],
        # Results statistics (interquartile means, bootstrap CIs, performance profiles) for
        # python -m rlkit.rl.analysis.minatar_results; rliable's arch needs pandas 2.
        "results": ["rliable>=1.2", "pandas<3"],
        # The reference site (mkdocs build --strict; mkdocs serve to read it locally).
        "docs": ["mkdocs>=1.6"],
        "test": ["pytest>=8", "pytest-xdist>=3.5", "gcp-storage-emulator>=2024.8", "minatar>=1.0.15", "ray[tune]>=2.40",
                 "mkdocs>=1.6", "rliable>=1.2", "pandas<3"],
    },
)
