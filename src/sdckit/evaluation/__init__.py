"""Evaluation of a release against its original: every applicable information-loss and
disclosure-risk measure, decided from the column types and the known protection method.

:func:`sdckit.evaluation.protected_file.evaluate` (also ``sdckit.evaluate``) combines the
measures of :mod:`sdckit.utility` and :mod:`sdckit.risk` (each cites its source); the
``evaluate``, ``compare`` and ``mask`` commands call it, and its page is drawn by
:mod:`sdckit.report.evaluation_report`. :mod:`sdckit.evaluation.comparison` evaluates several
protections of one data set and ranks them by R-U score (what ``sdckit compare`` runs; its
page is :mod:`sdckit.report.compare_report`); :mod:`sdckit.evaluation.masking_summary` sums up
a masking run (``sdckit mask``).
"""
