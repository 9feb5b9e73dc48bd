"""sdckit.algorithms"""
