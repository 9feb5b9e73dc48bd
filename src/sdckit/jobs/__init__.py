"""sdckit.jobs"""
