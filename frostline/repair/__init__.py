"""frostline.repair"""
