"""sdckit.masking"""
