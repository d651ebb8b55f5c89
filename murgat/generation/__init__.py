"""Answer generation (plain, cited, post-hoc cited) and reasoning-effort sweeps."""
