"""The web app of ``sdckit ui`` (the ``ui`` extra): :func:`sdckit.ui.app.create_app`.

Pages are rendered on the server (Jinja2 templates, htmx for partial updates, Plotly for the
figures); jobs run in worker processes through the same job runners and job files as the
command line. See :mod:`sdckit.ui.app`.
"""
