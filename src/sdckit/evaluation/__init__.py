"""Evaluation of a release against its original: every applicable information-loss and
disclosure-risk measure, decided from the column types and the known protection method.

:func:`sdckit.evaluation.protected_file.evaluate` (also ``sdckit.evaluate``) combines the
measures of :mod:`sdckit.utility` and :mod:`sdckit.risk` (each cites its source); the
``evaluate``, ``compare`` and ``mask`` commands call it, and its page is drawn by
:mod:`sdckit.report.evaluation_report`.
"""
