"""``murgat import``: evaluations run elsewhere (inspect_ai logs) as murgat inputs."""
