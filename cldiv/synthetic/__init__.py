"""synthetic"""
