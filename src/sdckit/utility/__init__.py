"""sdckit.utility"""
