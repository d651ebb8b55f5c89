"""``murgat generate`` and ``murgat sweep`` (a sweep is generate then score per reasoning effort, composed through the
engine by name): answers from an omni/vision model, plain, cited or post-hoc cited."""
