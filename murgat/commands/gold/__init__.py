"""``murgat gold import``: official annotation files to murgat's gold-evidence JSONL."""
