"""frostline.contract"""
