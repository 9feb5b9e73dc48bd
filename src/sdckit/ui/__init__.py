"""The web app of ``sdckit ui`` (the ``ui`` extra): :func:`sdckit.ui.app.create_app`.

Pages are rendered on the server (Jinja2 templates, htmx for partial updates, Plotly for the
figures); jobs run in worker processes through the same job runners and job files as the
command line. See :mod:`sdckit.ui.app`.
"""

#: Largest request body (bytes), a data file's upload: a larger file is opened by its path on
#: the server (``sdckit ui --max-upload-mb``).
MAX_UPLOAD = 500 * 10**6
#: Largest hierarchy upload (bytes; ``--max-hierarchy-mb``). An ARX hierarchy has a row per
#: value of its column (the 42,000 US ZIP codes with five levels take about 1.5 MB); reading
#: and checking one against the data takes about 20 times its size in memory.
MAX_HIERARCHY = 16 * 10**6
