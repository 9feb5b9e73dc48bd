"""Synthetic microdata: fully, partially and hybrid synthetic data, differentially private
synthesizers, one interface (:class:`~sdckit.synthesis.base.Synthesizer`: fit, then sample)."""
