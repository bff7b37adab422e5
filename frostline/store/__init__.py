"""frostline.store"""
