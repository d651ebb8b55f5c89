"""Everything that touches pixels and samples: probing, frames, audio, one-modality clips,
evidence for judges, ASR transcripts, on-screen text and a content-addressed cache.

Depends on nothing else of murgat's, so it can be used on its own.
"""
