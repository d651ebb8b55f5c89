"""``murgat media``: probe, transcribe, read on-screen text, dump judge evidence."""
