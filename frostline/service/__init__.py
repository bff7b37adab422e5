"""frostline.service"""
