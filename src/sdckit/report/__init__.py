"""User-facing reports: one writer for HTML pages (tables + figures) and JSON documents."""

from sdckit.report.writer import Report, Section, write_json

__all__ = ["Report", "Section", "write_json"]
