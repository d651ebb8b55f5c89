"""The pages and tables people read (``report.html``, the viewer, the console tables), below the commands that write them."""
