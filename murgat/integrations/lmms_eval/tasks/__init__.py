"""The folder of murgat's lmms-eval task files (the template and its functions); see :mod:`murgat.integrations.lmms_eval`."""
