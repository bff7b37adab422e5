"""frostline.runtime"""
