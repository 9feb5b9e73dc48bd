"""sdckit's protected query server (sdckit serve)."""
