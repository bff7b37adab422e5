"""frostline.graph"""
