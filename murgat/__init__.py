"""murgat: check that what a multimodal model says about a video is grounded in the
exact video and audio segments it cites (MURGAT-S), and tools to produce better-grounded
answers."""

__version__ = "0.1.0"
