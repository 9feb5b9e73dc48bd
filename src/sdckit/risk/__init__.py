"""sdckit.risk"""
